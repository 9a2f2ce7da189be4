//! Real servers for the remote-store tests, started from the repository's
//! `.venv` (made by `bash scripts/python/setup_venv.sh`, which the test
//! command runs first): Starlette's `StaticFiles` under uvicorn
//! (`scripts/servers/serve_http.py`) and moto's S3 server mode
//! (`scripts/servers/serve_s3.py`). Each binds a free port of 127.0.0.1,
//! prints it once it listens, and is killed when dropped; it also exits
//! when its stdin closes, that is with the test process, so a server kept
//! in a `static` for all the tests of a file ends with them.
#![allow(dead_code)] // each user needs a part

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// A server process; dropping it kills it.
pub struct PythonServer {
    child: Child,
    port: u16,
    /// What the server printed after its port, on the same line.
    extra: Vec<String>,
}

impl PythonServer {
    /// Run `scripts/servers/SCRIPT` with `args` and wait for its port.
    fn start(script: &str, args: &[String]) -> Self {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let python = root.join(".venv/bin/python");
        assert!(
            python.exists(),
            "{} is missing: run `bash scripts/python/setup_venv.sh` (the README's test command does)",
            python.display()
        );
        let mut child = Command::new(&python)
            .arg(root.join("scripts/servers").join(script))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {script}: {e}"));
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let mut words = line.split_whitespace();
        let port = words
            .next()
            .and_then(|w| w.parse().ok())
            .unwrap_or_else(|| {
                let _ = child.kill();
                panic!("{script} did not print its port (got {line:?}); see its stderr above")
            });
        let extra = words.map(str::to_string).collect();
        Self { child, port, extra }
    }

    /// Starlette's `StaticFiles` serving `root`, each response delayed by
    /// `latency_ms`.
    pub fn http(root: &Path, latency_ms: u32) -> Self {
        let args = vec![
            root.to_str().unwrap().to_string(),
            "--latency-ms".to_string(),
            latency_ms.to_string(),
        ];
        Self::start("serve_http.py", &args)
    }

    /// Starlette's `StaticFiles` serving `root`, with more arguments of
    /// `serve_http.py` (`--require-query NAME=VALUE`, `--no-versions`).
    pub fn http_with(root: &Path, args: &[&str]) -> Self {
        let mut all = vec![root.to_str().unwrap().to_string()];
        all.extend(args.iter().map(|a| a.to_string()));
        Self::start("serve_http.py", &all)
    }

    /// moto's S3 server with `bucket` holding the Zarr stores under `root`.
    pub fn s3(bucket: &str, root: &Path) -> Self {
        Self::start("serve_s3.py", &[format!("{bucket}={}", root.display())])
    }

    /// moto's S3 server with authentication enforced, `bucket` holding the
    /// Zarr stores under `root`, private; the access key id and secret key
    /// of the one IAM user that may read it; and the port of a stand-in
    /// for the instance metadata service that hands out the credentials of
    /// a role that may read it too.
    pub fn s3_private(bucket: &str, root: &Path) -> (Self, String, String, u16) {
        let server = Self::start(
            "serve_s3.py",
            &["--auth".to_string(), format!("{bucket}={}", root.display())],
        );
        let [id, secret, metadata] = <[String; 3]>::try_from(server.extra.clone())
            .expect("serve_s3.py --auth prints PORT KEY_ID SECRET METADATA_PORT");
        (server, id, secret, metadata.parse().unwrap())
    }

    /// `http://127.0.0.1:PORT` (no trailing slash).
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// `serve_http.py`'s counts since the last call (`requests`, `bytes`,
    /// `most_at_once`), which it then resets.
    pub fn stats_then_reset(&self) -> serde_json::Value {
        stats_then_reset(&self.url())
    }
}

/// The body of `GET {server}{path}` (`server`: `http://HOST:PORT`), by a
/// tiny blocking client.
pub fn http_get(server: &str, path: &str) -> String {
    use std::io::{Read, Write};
    let host = server.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response.split("\r\n\r\n").nth(1).unwrap_or("").to_string()
}

/// The counts of the `serve_http.py` at `server` since they were last
/// reset (`requests`, `bytes`, `most_at_once`), which it then resets.
pub fn stats_then_reset(server: &str) -> serde_json::Value {
    let stats = serde_json::from_str(&http_get(server, "/__stats")).unwrap();
    http_get(server, "/__reset");
    stats
}

impl Drop for PythonServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `fixtures/` in the repository.
pub fn fixtures_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// `options` for the moto server at `url`: its endpoint and region, signed
/// with moto's test keys.
pub fn moto_options(
    options: zarrs_extension_codecs::remote::RemoteOptions,
    url: &str,
) -> zarrs_extension_codecs::remote::RemoteOptions {
    options
        .with_s3_config("aws_endpoint_url", url)
        .with_s3_config("aws_region", "us-east-1")
        .with_s3_config("aws_access_key_id", "testing")
        .with_s3_config("aws_secret_access_key", "testing")
}
