//! The frames parent and child exchange: a request is a JSON header (task name, task, file lengths)
//! followed by the files' raw bytes; a response is one JSON document. Every frame starts with its
//! length, and every length is checked against a cap before anything is allocated.

use serde::{Deserialize, Serialize};
use std::io::{self, Read, Write};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Largest JSON frame (header or response): reports are a few kilobytes.
pub const MAX_JSON_FRAME: usize = 4 * 1024 * 1024;
/// Largest file in a request: deposits and uploads are capped at 10 MB before they get here.
pub const MAX_FILE: usize = 32 * 1024 * 1024;
/// Most files in one request (front, back, selfie).
pub const MAX_FILES: usize = 4;

/// The header of a request.
#[derive(Debug, Serialize, Deserialize)]
pub struct RequestHeader {
    pub task: String,
    pub body: serde_json::Value,
    pub file_lengths: Vec<u64>,
}

/// A request as the child reads it.
#[derive(Debug)]
pub struct Request {
    pub task: String,
    pub body: serde_json::Value,
    pub files: Vec<Vec<u8>>,
}

/// What the child answers: the task's output, or why the child could not run it.
#[derive(Debug, Serialize, Deserialize)]
pub enum Response {
    Done(serde_json::Value),
    /// The request itself was wrong (unknown task, malformed body): a bug, not the document's fault.
    Refused(String),
}

fn invalid(message: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.to_owned())
}

fn checked_len(len: u64, cap: usize) -> io::Result<usize> {
    usize::try_from(len)
        .ok()
        .filter(|&n| n <= cap)
        .ok_or_else(|| invalid("frame too large"))
}

/// Writes one request (parent side).
pub async fn write_request<W: AsyncWrite + Unpin>(out: &mut W, task: &str, body: serde_json::Value, files: &[&[u8]]) -> io::Result<()> {
    let header = RequestHeader {
        task: task.to_owned(),
        body,
        file_lengths: files.iter().map(|f| f.len() as u64).collect(),
    };
    let json = serde_json::to_vec(&header).map_err(|e| invalid(&e.to_string()))?;
    out.write_all(&(json.len() as u64).to_be_bytes()).await?;
    out.write_all(&json).await?;
    for file in files {
        out.write_all(file).await?;
    }
    out.flush().await
}

/// Reads one response (parent side).
pub async fn read_response<R: AsyncRead + Unpin>(input: &mut R) -> io::Result<Response> {
    let len = checked_len(input.read_u64().await?, MAX_JSON_FRAME)?;
    let mut json = vec![0; len];
    input.read_exact(&mut json).await?;
    serde_json::from_slice(&json).map_err(|e| invalid(&e.to_string()))
}

/// Reads one request (child side); `Ok(None)` when the parent closed the pipe between requests.
pub fn read_request(input: &mut impl Read) -> io::Result<Option<Request>> {
    let mut raw = [0u8; 8];
    match input.read_exact(&mut raw) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = checked_len(u64::from_be_bytes(raw), MAX_JSON_FRAME)?;
    let mut json = vec![0; len];
    input.read_exact(&mut json)?;
    let header: RequestHeader = serde_json::from_slice(&json).map_err(|e| invalid(&e.to_string()))?;
    if header.file_lengths.len() > MAX_FILES {
        return Err(invalid("too many files"));
    }
    let mut files = Vec::with_capacity(header.file_lengths.len());
    for &length in &header.file_lengths {
        let mut file = vec![0; checked_len(length, MAX_FILE)?];
        input.read_exact(&mut file)?;
        files.push(file);
    }
    Ok(Some(Request {
        task: header.task,
        body: header.body,
        files,
    }))
}

/// Writes one response (child side).
pub fn write_response(out: &mut impl Write, response: &Response) -> io::Result<()> {
    let json = serde_json::to_vec(response).map_err(|e| invalid(&e.to_string()))?;
    out.write_all(&(json.len() as u64).to_be_bytes())?;
    out.write_all(&json)?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_request_and_a_response_round_trip() {
        let mut wire = Vec::new();
        write_request(&mut wire, "count", serde_json::json!({"kind": "pdf"}), &[b"abc", b""])
            .await
            .unwrap();
        let request = read_request(&mut wire.as_slice()).unwrap().unwrap();
        assert_eq!(request.task, "count");
        assert_eq!(request.body["kind"], "pdf");
        assert_eq!(request.files, vec![b"abc".to_vec(), Vec::new()]);

        let mut wire = Vec::new();
        write_response(&mut wire, &Response::Done(serde_json::json!(3))).unwrap();
        match read_response(&mut wire.as_slice()).await.unwrap() {
            Response::Done(value) => assert_eq!(value, 3),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_closed_pipe_between_requests_is_the_end_not_an_error() {
        assert!(read_request(&mut [].as_slice()).unwrap().is_none());
    }

    #[test]
    fn lengths_beyond_the_caps_are_refused_before_allocating() {
        let huge = (u64::MAX).to_be_bytes();
        assert!(read_request(&mut huge.as_slice()).is_err());
        let header = serde_json::to_vec(&RequestHeader {
            task: "t".into(),
            body: serde_json::Value::Null,
            file_lengths: vec![1 << 40],
        })
        .unwrap();
        let mut wire = (header.len() as u64).to_be_bytes().to_vec();
        wire.extend_from_slice(&header);
        assert!(read_request(&mut wire.as_slice()).is_err());
    }
}
