//! Container credentials at `AWS_CONTAINER_CREDENTIALS_FULL_URI` (ECS
//! Anywhere, Greengrass, EKS Pod Identity), read the way the AWS SDKs read
//! them.
//!
//! object_store reads this address only with a token file, and with none
//! falls back, unsaid, to the instance metadata service; it sends the
//! token to the address whatever its scheme and host. The SDKs send it in
//! plain HTTP only to loopback and the two addresses of the container
//! agents (169.254.170.2 for ECS, 169.254.170.23 / `fd00:ec2::23` for EKS),
//! and take the token from `AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE` (read
//! again at each fetch: EKS rotates it) or `AWS_CONTAINER_AUTHORIZATION_TOKEN`.
//! This module does the same; an address it refuses is an error at open,
//! before any request.

use std::net::IpAddr;
use std::time::Duration;

use super::refreshing::{FetchedKeys, RefreshingCredentials, expiry_of};

/// How long one fetch of the keys may take.
const FETCH_LIMIT: Duration = Duration::from_secs(5);

/// The most bytes of an answer read: keys are a few hundred.
const ANSWER_LIMIT: usize = 64 << 10;

/// Where the token comes from.
#[derive(Clone, Debug)]
pub(crate) enum Token {
    /// No token: no `Authorization` header.
    None,
    /// `AWS_CONTAINER_AUTHORIZATION_TOKEN`.
    Value(String),
    /// `AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE`, read at each fetch.
    File(std::path::PathBuf),
}

/// Whether a plain-HTTP address may be sent a token: loopback, or a
/// container agent's.
fn trusted_plain_host(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    match host.parse::<IpAddr>() {
        Ok(ip) => {
            ip.is_loopback()
                || ["169.254.170.2", "169.254.170.23", "fd00:ec2::23"]
                    .iter()
                    .any(|agent| agent.parse::<IpAddr>().is_ok_and(|a| a == ip))
        }
        Err(_) => false,
    }
}

/// `uri` if the SDKs would send container credentials' token to it.
///
/// # Errors
/// Why not, naming the variable and the host (never a query).
pub(crate) fn checked_uri(uri: &str) -> Result<reqwest::Url, String> {
    let shown = super::redact_url(uri);
    let url = reqwest::Url::parse(uri)
        .map_err(|e| format!("AWS_CONTAINER_CREDENTIALS_FULL_URI={shown} is not a URL: {e}"))?;
    let host = url.host_str().unwrap_or("");
    match url.scheme() {
        "https" => Ok(url),
        "http" if trusted_plain_host(host) => Ok(url),
        "http" => Err(format!(
            "AWS_CONTAINER_CREDENTIALS_FULL_URI={shown}: plain HTTP goes only to loopback or a container agent (169.254.170.2, 169.254.170.23, fd00:ec2::23), as the AWS SDKs allow, not to {host}: use https"
        )),
        scheme => Err(format!(
            "AWS_CONTAINER_CREDENTIALS_FULL_URI={shown}: scheme {scheme} is not http or https"
        )),
    }
}

/// The credentials at `url`, fetched with `token`, kept until a minute
/// before they expire.
pub(crate) fn container_credentials(url: reqwest::Url, token: Token) -> RefreshingCredentials {
    let source = format!(
        "container credentials (AWS_CONTAINER_CREDENTIALS_FULL_URI={})",
        super::redact_url(url.as_str())
    );
    RefreshingCredentials::new(source, move || fetch(&url, &token))
}

/// One fetch, on a thread and runtime of its own (the refreshing wrapper
/// may call it from a blocking thread of the caller's runtime, or with no
/// runtime at all).
fn fetch(url: &reqwest::Url, token: &Token) -> Result<FetchedKeys, String> {
    let authorization = match token {
        Token::None => None,
        Token::Value(value) => Some(value.trim().to_string()),
        Token::File(path) => Some(
            std::fs::read_to_string(path)
                .map_err(|e| {
                    format!(
                        "cannot read AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE {}: {e}",
                        path.display()
                    )
                })?
                .trim()
                .to_string(),
        ),
    };
    let url = url.clone();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start a runtime: {e}"))?;
        runtime.block_on(get(url, authorization))
    })
    .join()
    .map_err(|_| "the fetch panicked".to_string())?
}

async fn get(url: reqwest::Url, authorization: Option<String>) -> Result<FetchedKeys, String> {
    let client = reqwest::Client::builder()
        .timeout(FETCH_LIMIT)
        .connect_timeout(Duration::from_secs(2))
        // The address was checked; a redirect would go unchecked.
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .build()
        .map_err(|e| crate::error_chain(&e))?;
    let mut request = client.get(url);
    if let Some(authorization) = authorization {
        request = request.header("Authorization", authorization);
    }
    let mut response = request.send().await.map_err(|e| crate::error_chain(&e))?;
    let status = response.status();
    let mut body = Vec::new();
    while let Some(piece) = response.chunk().await.map_err(|e| crate::error_chain(&e))? {
        if body.len() + piece.len() > ANSWER_LIMIT {
            return Err(format!("answered more than {ANSWER_LIMIT} bytes"));
        }
        body.extend_from_slice(&piece);
    }
    if !status.is_success() {
        return Err(format!("answered {status}"));
    }
    parse(&body)
}

/// The keys of an answer: `AccessKeyId`, `SecretAccessKey`, `Token`,
/// `Expiration` (RFC 3339), as the ECS and EKS agents give them.
///
/// # Errors
/// What is missing, naming fields, never their values.
fn parse(body: &[u8]) -> Result<FetchedKeys, String> {
    let value: serde_json::Value =
        serde_json::from_slice(body).map_err(|e| format!("answered what is not JSON ({e})"))?;
    let field = |name: &str| value.get(name).and_then(serde_json::Value::as_str);
    let (Some(id), Some(secret)) = (field("AccessKeyId"), field("SecretAccessKey")) else {
        return Err("answered no AccessKeyId and SecretAccessKey".to_string());
    };
    let expires = match field("Expiration") {
        Some(text) => expiry_of(text)
            .map_err(|e| format!("answered an Expiration {text:?} that is not a time: {e}"))?,
        None => None,
    };
    Ok(FetchedKeys::new(
        id,
        secret,
        field("Token").map(str::to_string),
        expires,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remote::unix_time;

    #[test]
    fn plain_http_only_to_loopback_and_the_agents() {
        for uri in [
            "http://127.0.0.1:8080/creds",
            "http://127.5.5.5/creds",
            "http://localhost/creds",
            "http://[::1]:9/creds",
            "http://169.254.170.2/v2/credentials/abc",
            "http://169.254.170.23/v1/credentials",
            "http://[fd00:ec2::23]/v1/credentials",
            "https://creds.example.com/v1",
        ] {
            assert!(checked_uri(uri).is_ok(), "{uri}");
        }
        for uri in [
            "http://creds.example.com/v1",
            "http://169.254.169.254/latest",
            "http://10.0.0.1/creds",
            "ftp://127.0.0.1/creds",
        ] {
            let error = checked_uri(uri).unwrap_err();
            assert!(
                error.contains("AWS_CONTAINER_CREDENTIALS_FULL_URI"),
                "{error}"
            );
        }
        let error = checked_uri("http://u:pw@evil.example/creds?t=1").unwrap_err();
        assert!(!error.contains("pw") && !error.contains("t=1"), "{error}");
    }

    #[test]
    fn answers_of_the_agents() {
        let keys = parse(
            br#"{"AccessKeyId":"AKID","SecretAccessKey":"s3cr3t","Token":"tok","Expiration":"2026-11-18T11:06:40Z"}"#,
        )
        .unwrap();
        // 2026-11-18T11:06:40Z is 1_795_000_000 s after the epoch (worked
        // out by hand in refreshing.rs' tests).
        assert_eq!(keys.expires, unix_time(1_795_000_000.0));
        assert_eq!(keys.credential.token.as_deref(), Some("tok"));
        let error = parse(br#"{"AccessKeyId":"AKID"}"#).unwrap_err();
        assert!(error.contains("SecretAccessKey"), "{error}");
        let error =
            parse(br#"{"AccessKeyId":"AKID","SecretAccessKey":"s3cr3t","Expiration":"soon"}"#)
                .unwrap_err();
        assert!(
            error.contains("Expiration") && !error.contains("s3cr3t"),
            "{error}"
        );
    }
}
