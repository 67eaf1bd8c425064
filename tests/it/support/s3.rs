//! A real S3-compatible server for the distributed suite: `s3s-fs` (installed by `scripts/test`)
//! serving a temporary directory, one per service, so that workers share nothing with the
//! gateway but the broker and the bucket, as on separate hosts.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The bucket every test service keeps its blobs in.
pub const BUCKET: &str = "sceau-blobs";
const ACCESS_KEY: &str = "sceau-test";
const SECRET_KEY: &str = "sceau-test-secret";

pub struct S3Server {
    child: Option<Child>,
    port: u16,
    pub endpoint: String,
    /// The directory `s3s-fs` serves: one sub-directory per bucket, one file per object.
    pub root: PathBuf,
}

impl S3Server {
    /// Starts `s3s-fs` on a free loopback port over `root`, with the bucket made, and waits until
    /// it accepts connections.
    pub fn start(root: &Path) -> S3Server {
        std::fs::create_dir_all(root.join(BUCKET)).expect("create the bucket's directory");
        let port = free_port();
        let mut server = S3Server {
            child: None,
            port,
            endpoint: format!("http://127.0.0.1:{port}"),
            root: root.to_owned(),
        };
        server.restart();
        server
    }

    /// Stops the server: the bucket stops answering (its objects stay on disk).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the server again on the same port and directory.
    pub fn restart(&mut self) {
        self.stop();
        let child = Command::new(program())
            .args(["--host", "127.0.0.1", "--port", &self.port.to_string()])
            .args(["--access-key", ACCESS_KEY, "--secret-key", SECRET_KEY])
            .arg(&self.root)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot start s3s-fs ({e}); scripts/test installs it: cargo install s3s-fs@0.14.1 --features binary --locked")
            });
        self.child = Some(child);
        self.wait_until_listening();
    }

    /// The settings that put a service's blobs in this server's bucket.
    pub fn env(&self) -> Vec<(String, String)> {
        [
            ("SCEAU_BLOB_URL", format!("s3://{BUCKET}")),
            ("AWS_ENDPOINT_URL", self.endpoint.clone()),
            ("AWS_ACCESS_KEY_ID", ACCESS_KEY.into()),
            ("AWS_SECRET_ACCESS_KEY", SECRET_KEY.into()),
            ("AWS_REGION", "us-east-1".into()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
    }

    /// Where the bucket's objects are on disk.
    pub fn bucket_dir(&self) -> PathBuf {
        self.root.join(BUCKET)
    }

    fn wait_until_listening(&self) {
        let (port, deadline) = (self.port, Instant::now() + Duration::from_secs(10));
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "s3s-fs did not listen on port {port} within 10 s");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// `s3s-fs` from the PATH, or from cargo's bin directory where `cargo install` puts it.
fn program() -> PathBuf {
    let in_cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cargo")))
        .map(|home| home.join("bin").join("s3s-fs"));
    match in_cargo_home {
        Some(path) if path.is_file() => path,
        _ => PathBuf::from("s3s-fs"),
    }
}

/// A port free at this instant (the server binds it right after).
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("local address").port()
}
