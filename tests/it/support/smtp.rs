//! A real local SMTP server for the tests: it speaks enough of RFC 5321 for lettre (greeting,
//! EHLO, MAIL, RCPT, DATA, QUIT) and keeps each message it receives, so a test reads the e-mail
//! the service sent.

use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

/// One received message: its recipients and its raw text.
#[derive(Debug, Clone)]
pub struct Mail {
    pub to: Vec<String>,
    pub data: String,
}

pub struct Smtp {
    pub url: String,
    pub mails: Arc<Mutex<Vec<Mail>>>,
}

impl Smtp {
    /// Serves on a thread and runtime of its own: tests call the CLI, which blocks theirs.
    pub async fn start() -> Smtp {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind smtp");
        listener.set_nonblocking(true).expect("non-blocking");
        let addr = listener.local_addr().unwrap();
        let mails = Arc::new(Mutex::new(Vec::new()));
        let kept = mails.clone();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("smtp runtime");
            runtime.block_on(async move { serve(TcpListener::from_std(listener).expect("listener"), kept).await });
        });
        Smtp {
            url: format!("smtp://{addr}"),
            mails,
        }
    }
}

async fn serve(listener: TcpListener, kept: Arc<Mutex<Vec<Mail>>>) {
    while let Ok((stream, _)) = listener.accept().await {
        let kept = kept.clone();
        tokio::spawn(async move {
            let (read, mut write) = stream.into_split();
            let mut lines = BufReader::new(read).lines();
            let _ = write.write_all(b"220 localhost test SMTP\r\n").await;
            let mut to = Vec::new();
            while let Ok(Some(line)) = lines.next_line().await {
                let upper = line.to_ascii_uppercase();
                let reply: &[u8] = if upper.starts_with("EHLO") || upper.starts_with("HELO") {
                    b"250 localhost\r\n"
                } else if upper.starts_with("RCPT TO:") {
                    to.push(line[8..].trim().trim_matches(|c| c == '<' || c == '>').to_owned());
                    b"250 OK\r\n"
                } else if upper.starts_with("DATA") {
                    let _ = write.write_all(b"354 go on\r\n").await;
                    let mut data = String::new();
                    while let Ok(Some(l)) = lines.next_line().await {
                        if l == "." {
                            break;
                        }
                        data.push_str(&l);
                        data.push('\n');
                    }
                    kept.lock().unwrap().push(Mail {
                        to: std::mem::take(&mut to),
                        data,
                    });
                    b"250 queued\r\n"
                } else if upper.starts_with("QUIT") {
                    let _ = write.write_all(b"221 bye\r\n").await;
                    break;
                } else {
                    b"250 OK\r\n"
                };
                if write.write_all(reply).await.is_err() {
                    break;
                }
            }
        });
    }
}
