//! Credentials from a profile's `credential_process`: a command that
//! prints temporary keys as JSON, the way the AWS tools source them from an
//! external program (aws-vault, granted, saml2aws, or the AWS CLI itself:
//! `aws configure export-credentials --profile NAME --format process`,
//! which bridges an SSO profile).
//!
//! The command runs through the shell (`/bin/sh -c`, `cmd /C` on Windows),
//! as the AWS SDK for Rust runs it, with the process's environment and no
//! standard input (a prompt fails at once rather than wait for an answer
//! that cannot come), at the first request that needs credentials and
//! again when the keys it gave are within a minute of their `Expiration`
//! (never, without one): a [`RefreshingCredentials`] of the run. Requests
//! waiting meanwhile share that one run. A run that takes longer than [`RUN_LIMIT`] is stopped.
//! On Unix it runs in a process group of its own, and the whole group is
//! stopped at the limit (a tool's helpers with it: a browser opened for a
//! login, a `sleep` it left behind). At most [`OUTPUT_LIMIT`] bytes of its
//! output are kept. Its output is `{"Version": 1, "AccessKeyId": ..., "SecretAccessKey":
//! ..., "SessionToken": ..., "Expiration": "RFC 3339 time"}` (the last two
//! optional). A run that fails, or whose output is not that (or gives keys
//! already expired), fails the request with a message that names the
//! profile, its file and what was wrong: the exit status and the end of
//! its standard error, or the field; never the command line (it may carry
//! arguments a user would not show) or the output's keys.

use std::io::Read;
use std::process::{Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::refreshing::{FetchedKeys, RefreshingCredentials, expiry_of};

/// How long a run may take: a tool that hangs (a prompt that cannot be
/// answered, a network that does not) must not hold every request
/// forever.
pub(crate) const RUN_LIMIT: Duration = Duration::from_secs(60);

/// The most of a failed run's standard error a message shows (its end,
/// where tools say what went wrong).
const STDERR_SHOWN: usize = 600;

/// The most bytes of a run's standard output or error kept: keys are a few
/// hundred bytes, and a tool that prints without end must not fill memory.
pub(crate) const OUTPUT_LIMIT: usize = 1 << 20;

/// The credentials of the `command` of profile `name` in `file`; nothing
/// runs yet.
pub(crate) fn process_credentials(
    name: &str,
    file: &std::path::Path,
    command: String,
) -> RefreshingCredentials {
    stopped_after(name, file, command, RUN_LIMIT)
}

/// [`process_credentials`] with runs stopped after `limit`.
fn stopped_after(
    name: &str,
    file: &std::path::Path,
    command: String,
    limit: Duration,
) -> RefreshingCredentials {
    // The source names the profile, never the command: it may carry
    // arguments a user would not show.
    let source = format!("the credential_process of {}", describe(name, file));
    RefreshingCredentials::new(source, move || run_once(&command, limit))
}

/// Run `command` once and read its keys.
fn run_once(command: &str, limit: Duration) -> Result<FetchedKeys, String> {
    let output = run_for(command, limit)?;
    if !output.status.success() {
        return Err(format!(
            "exited with {}{}",
            output.status,
            stderr_tail(&output.stderr)
        ));
    }
    parse(&output.stdout)
}

/// `profile 'NAME' in FILE`.
pub(crate) fn describe(name: &str, file: &std::path::Path) -> String {
    format!("profile '{name}' in {}", file.display())
}

/// The command line `command` run by the shell.
fn shell(command: &str) -> std::process::Command {
    #[cfg(windows)]
    let mut run = {
        use std::os::windows::process::CommandExt;
        let mut run = std::process::Command::new("cmd.exe");
        // As written: `cmd` does not undo the quoting `arg` would add.
        run.arg("/C").raw_arg(command);
        run
    };
    #[cfg(not(windows))]
    let mut run = {
        // Not `sh` from PATH: the shell is not the user's to replace.
        let mut run = std::process::Command::new("/bin/sh");
        run.arg("-c").arg(command);
        run
    };
    // A group of its own: stopped as one at the limit (`stop_group`).
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut run, 0);
    run.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    run
}

/// Stop `child` and, on Unix, every process of its group (what it
/// started and left running). The shell's `kill` takes a negative process
/// id for a group; no `unsafe` call is needed for it.
fn stop_group(child: &mut std::process::Child) {
    #[cfg(unix)]
    {
        let group = format!("-{}", child.id());
        let _ = std::process::Command::new("/bin/sh")
            .args(["-c", "kill -KILL \"$0\" 2>/dev/null", &group])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Run `command` through the shell, stopped after `limit`: its output, or
/// why there is none.
fn run_for(command: &str, limit: Duration) -> Result<Output, String> {
    let deadline = Instant::now() + limit;
    let mut child = shell(command)
        .spawn()
        .map_err(|e| format!("cannot be started: {e}"))?;
    // Read on threads of their own: a child that fills a pipe waits for it
    // to be read before it can end. They answer through a channel, so that
    // a process the command left running with the pipes open (a browser
    // for a login, say) delays the answer no longer than the limit.
    // What is past `OUTPUT_LIMIT` is read and let go, so that the command
    // is not blocked on a full pipe; the answer says it was cut.
    fn drain(pipe: Option<impl Read + Send + 'static>) -> mpsc::Receiver<(Vec<u8>, bool)> {
        let (send, receive) = mpsc::channel();
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let mut cut = false;
            if let Some(pipe) = pipe {
                let mut pipe = pipe.take(OUTPUT_LIMIT as u64 + 1);
                let _ = pipe.read_to_end(&mut bytes);
                if bytes.len() > OUTPUT_LIMIT {
                    bytes.truncate(OUTPUT_LIMIT);
                    cut = true;
                    let _ = std::io::copy(&mut pipe.into_inner(), &mut std::io::sink());
                }
            }
            let _ = send.send((bytes, cut));
        });
        receive
    }
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let too_long = || {
        format!(
            "did not finish within {} ms, and was stopped",
            limit.as_millis()
        )
    };
    let mut pause = Duration::from_millis(1);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(20));
            }
            Ok(None) => {
                stop_group(&mut child);
                return Err(too_long());
            }
            Err(e) => return Err(format!("cannot be waited for: {e}")),
        }
    };
    let read = |pipe: &mpsc::Receiver<(Vec<u8>, bool)>| {
        pipe.recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .map_err(|_| {
                format!(
                    "ended ({status}), but a process it started kept its output open past {} ms, and was stopped",
                    limit.as_millis()
                )
            })
    };
    let outputs = read(&stdout).and_then(|out| Ok((out, read(&stderr)?)));
    let ((stdout, stdout_cut), (stderr, _)) = match outputs {
        Ok(outputs) => outputs,
        Err(error) => {
            // What it left running goes with it.
            stop_group(&mut child);
            return Err(error);
        }
    };
    if stdout_cut {
        return Err(format!(
            "printed more than {OUTPUT_LIMIT} bytes, which are not keys"
        ));
    }
    Ok(Output {
        status,
        stdout,
        stderr,
    })
}

/// `: ` and the last [`STDERR_SHOWN`] bytes of `stderr` on one line, or
/// nothing.
fn stderr_tail(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.is_empty() {
        return String::new();
    }
    let start = text
        .char_indices()
        .map(|(at, _)| at)
        .find(|&at| text.len() - at <= STDERR_SHOWN)
        .unwrap_or(text.len());
    let ellipsis = if start > 0 { "..." } else { "" };
    format!(": {ellipsis}{}", &text[start..])
}

/// The keys in a run's standard output.
///
/// # Errors
/// What is wrong with the output, naming fields, never their values
/// (except `Version` and `Expiration`, which are no secrets).
fn parse(stdout: &[u8]) -> Result<FetchedKeys, String> {
    let value: serde_json::Value =
        serde_json::from_slice(stdout).map_err(|e| format!("printed what is not JSON ({e})"))?;
    let Some(fields) = value.as_object() else {
        return Err("printed JSON that is not an object".to_string());
    };
    match fields.get("Version") {
        // 1 or 1.0, as a JSON number.
        Some(version) if version.as_f64() == Some(1.0) => {}
        Some(version) => {
            return Err(format!(
                "printed Version {version}, where 1 is the one known"
            ));
        }
        None => return Err("printed no Version (1)".to_string()),
    }
    let text = |name: &str, required: bool| -> Result<Option<String>, String> {
        match fields.get(name) {
            Some(serde_json::Value::String(text)) if !text.is_empty() => Ok(Some(text.clone())),
            None | Some(serde_json::Value::Null) if !required => Ok(None),
            None => Err(format!("printed no {name}")),
            Some(_) => Err(format!("printed {name} as what is not a non-empty string")),
        }
    };
    let key_id = text("AccessKeyId", true)?.unwrap_or_default();
    let secret_key = text("SecretAccessKey", true)?.unwrap_or_default();
    // An empty token is no token, as the AWS CLI reads it.
    let token = match fields.get("SessionToken") {
        Some(serde_json::Value::String(token)) if token.is_empty() => None,
        _ => text("SessionToken", false)?,
    };
    let expires = match text("Expiration", false)? {
        None => None,
        Some(time) => expiry_of(&time).map_err(|e| {
            format!("printed an Expiration {time:?} that is not an RFC 3339 time ({e})")
        })?,
    };
    Ok(FetchedKeys::new(key_id, secret_key, token, expires))
}

#[cfg(test)]
mod tests {
    use object_store::CredentialProvider;

    use super::*;

    fn at(rfc3339: &str) -> std::time::SystemTime {
        chrono::DateTime::parse_from_rfc3339(rfc3339)
            .unwrap()
            .into()
    }

    /// The output format of the AWS CLI's documentation for
    /// `credential_process`, with and without the optional fields.
    #[test]
    fn outputs_that_give_keys() {
        let held = parse(
            br#"{"Version": 1, "AccessKeyId": "AKIDEXAMPLE", "SecretAccessKey": "s3cr3t",
                 "SessionToken": "tok", "Expiration": "2026-11-27T06:00:00+01:00"}"#,
        )
        .unwrap();
        assert_eq!(held.credential.key_id, "AKIDEXAMPLE");
        assert_eq!(held.credential.secret_key, "s3cr3t");
        assert_eq!(held.credential.token.as_deref(), Some("tok"));
        // 06:00 at +01:00 is 05:00 UTC.
        assert_eq!(held.expires, Some(at("2026-11-27T05:00:00Z")));

        let held = parse(
            br#"{"Version": 1, "AccessKeyId": "A", "SecretAccessKey": "S", "SessionToken": null}"#,
        )
        .unwrap();
        assert_eq!(held.credential.token, None);
        assert_eq!(held.expires, None);

        // Version 1.0 is 1; an empty token is none.
        let held = parse(
            br#"{"Version": 1.0, "AccessKeyId": "A", "SecretAccessKey": "S", "SessionToken": ""}"#,
        )
        .unwrap();
        assert_eq!(held.credential.token, None);
    }

    /// Times before 1970 are long past; times `SystemTime` cannot hold
    /// are never.
    #[test]
    fn expirations_far_off() {
        let held = parse(
            br#"{"Version":1,"AccessKeyId":"A","SecretAccessKey":"S","Expiration":"1960-01-01T00:00:00Z"}"#,
        )
        .unwrap();
        assert!(held.expires.unwrap() < at("1970-01-01T00:00:00Z"));
        let held = parse(
            br#"{"Version":1,"AccessKeyId":"A","SecretAccessKey":"S","Expiration":"9999-12-31T23:59:59Z"}"#,
        )
        .unwrap();
        assert!(
            held.expires
                .is_none_or(|at| at > std::time::SystemTime::now())
        );
    }

    /// Each output that gives no keys says what is wrong, and never shows
    /// a secret value.
    #[test]
    fn outputs_that_do_not_give_keys() {
        for (output, says) in [
            (&b"AKID s3cr3t"[..], "is not JSON"),
            (br#"["s3cr3t"]"#, "not an object"),
            (br#"{"AccessKeyId": "A", "SecretAccessKey": "s3cr3t"}"#, "no Version (1)"),
            (
                br#"{"Version": 2, "AccessKeyId": "A", "SecretAccessKey": "s3cr3t"}"#,
                "printed Version 2, where 1",
            ),
            (
                br#"{"Version": "1", "AccessKeyId": "A", "SecretAccessKey": "s3cr3t"}"#,
                "printed Version \"1\"",
            ),
            (br#"{"Version": 1, "SecretAccessKey": "s3cr3t"}"#, "printed no AccessKeyId"),
            (br#"{"Version": 1, "AccessKeyId": "A"}"#, "printed no SecretAccessKey"),
            (
                br#"{"Version": 1, "AccessKeyId": "A", "SecretAccessKey": ["s3cr3t"]}"#,
                "printed SecretAccessKey as what is not a non-empty string",
            ),
            (
                br#"{"Version": 1, "AccessKeyId": "", "SecretAccessKey": "s3cr3t"}"#,
                "printed AccessKeyId as what is not",
            ),
            (
                br#"{"Version": 1, "AccessKeyId": "A", "SecretAccessKey": "s3cr3t", "SessionToken": 7}"#,
                "printed SessionToken as what is not",
            ),
            (
                br#"{"Version": 1, "AccessKeyId": "A", "SecretAccessKey": "s3cr3t", "Expiration": "tomorrow"}"#,
                "an Expiration \"tomorrow\" that is not an RFC 3339 time",
            ),
        ] {
            let Err(message) = parse(output) else {
                panic!("{} gave keys", String::from_utf8_lossy(output));
            };
            assert!(message.contains(says), "{message:?} lacks {says:?}");
            assert!(!message.contains("s3cr3t"), "{message:?} shows the secret");
        }
    }

    #[test]
    fn the_end_of_standard_error_on_one_line() {
        assert_eq!(stderr_tail(b""), "");
        assert_eq!(stderr_tail(b"  \n"), "");
        assert_eq!(
            stderr_tail(b"Error: token expired\n  run aws sso login\n"),
            ": Error: token expired run aws sso login"
        );
        let long = format!("{}THE END", "x\u{e9}".repeat(400));
        let tail = stderr_tail(long.as_bytes());
        assert!(
            tail.starts_with(": ...") && tail.ends_with("THE END"),
            "{tail}"
        );
        assert!(tail.len() <= STDERR_SHOWN + 5, "{}", tail.len());
    }

    /// The credentials of the shell script `body`, stopped
    /// after `limit`; and the script's path.
    #[cfg(unix)]
    fn process_of(
        body: &str,
        limit: Duration,
    ) -> (RefreshingCredentials, tempfile::TempDir, String) {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("keys.sh");
        std::fs::write(&script, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let command = format!("{} --secret-arg", script.display());
        let process = stopped_after("p", &dir.path().join("config"), command.clone(), limit);
        (process, dir, command)
    }

    /// The error `process` gives, within 10 s.
    async fn error_soon(process: &RefreshingCredentials) -> String {
        let start = Instant::now();
        let error = process.get_credential().await.unwrap_err().to_string();
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{:?}",
            start.elapsed()
        );
        error
    }

    /// A run that hangs is stopped at the limit; keys already expired are
    /// refused; neither message shows the command line.
    #[cfg(unix)]
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn runs_that_give_no_usable_keys() {
        let (process, _dir, command) = process_of("sleep 30", Duration::from_millis(300));
        let error = error_soon(&process).await;
        assert!(
            error.contains("the credential_process of profile 'p' in ")
                && error.contains("did not finish within 300 ms, and was stopped"),
            "{error}"
        );
        assert!(
            !error.contains(&command) && !error.contains("--secret-arg"),
            "{error}"
        );

        let (process, _dir, command) = process_of(
            r#"printf '%s' '{"Version": 1, "AccessKeyId": "A", "SecretAccessKey": "s3cr3t", "Expiration": "2020-01-01T00:00:00Z"}'"#,
            RUN_LIMIT,
        );
        let error = process.get_credential().await.unwrap_err().to_string();
        assert!(
            error.contains("gave keys that expired at 2020-01-01T00:00:00+00:00"),
            "{error}"
        );
        assert!(
            !error.contains(&command) && !error.contains("s3cr3t"),
            "{error}"
        );
    }

    /// A command that leaves a process holding its output is not waited
    /// for past the limit.
    #[cfg(unix)]
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_process_left_holding_the_output_is_not_waited_for() {
        let (process, _dir, _) = process_of(
            concat!(
                "sleep 30 &\n",
                r#"printf '%s' '{"Version": 1, "AccessKeyId": "A", "SecretAccessKey": "S"}'"#,
            ),
            Duration::from_millis(500),
        );
        let error = error_soon(&process).await;
        assert!(
            error.contains(
                "ended (exit status: 0), but a process it started kept its output open past 500 ms"
            ),
            "{error}"
        );
    }

    /// Whether process `pid` is still there (and not a zombie).
    #[cfg(target_os = "linux")]
    fn alive(pid: &str) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|stat| !stat.split(") ").nth(1).is_some_and(|s| s.starts_with('Z')))
    }

    /// A run that forks a sleeper and hangs is stopped as a group at its
    /// limit: the sleeper goes too (before, only the shell was killed).
    /// So is one that ends but leaves a sleeper holding its output.
    #[cfg(target_os = "linux")]
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_run_is_stopped_with_what_it_started() {
        for (body, says) in [
            (
                "sleep 30 &\necho $! > \"$0.pid\"\nsleep 30",
                "did not finish within",
            ),
            (
                "sleep 30 &\necho $! > \"$0.pid\"\nprintf '%s' '{}'",
                "kept its output open",
            ),
        ] {
            let (process, dir, _) = process_of(body, Duration::from_millis(500));
            let error = error_soon(&process).await;
            assert!(error.contains(says), "{error}");
            let pid = std::fs::read_to_string(dir.path().join("keys.sh.pid")).unwrap();
            let pid = pid.trim();
            let start = Instant::now();
            while alive(pid) && start.elapsed() < Duration::from_secs(5) {
                std::thread::sleep(Duration::from_millis(20));
            }
            assert!(!alive(pid), "{says}: the sleeper {pid} lives on");
        }
    }

    /// Output past the limit is not kept, and the run is an error.
    #[cfg(unix)]
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn output_past_the_limit_is_refused() {
        let (process, _dir, _) = process_of("head -c 3000000 /dev/zero", RUN_LIMIT);
        let error = error_soon(&process).await;
        assert!(
            error.contains(&format!("printed more than {OUTPUT_LIMIT} bytes")),
            "{error}"
        );
    }
}
