//! The object_store behind a URL: its HTTP store for `http(s)://`, its S3
//! store for `s3://bucket/prefix`, wrapped to count requests.

use std::sync::Arc;

use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::http::HttpBuilder;
use object_store::prefix::PrefixStore;
use object_store::{BackoffConfig, ClientOptions, ObjectStore, RetryConfig};

use super::counting::{Counters, CountingStore};
use super::credentials::{Decided, InstanceOrUnsigned, Signing};
use super::transport::{Redirects, Transport};
use super::{RemoteError, RemoteOptions};
use crate::error_chain;
use crate::redact::{Redactor, redact_url};

/// S3 settings whose values are credentials (or an SSE-C encryption key):
/// never printed.
pub(super) fn is_credential_setting(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    [
        "secret",
        "token",
        "access_key",
        "key_id",
        "password",
        "customer_key",
    ]
    .iter()
    .any(|part| name.contains(part))
}

/// The store behind a URL, and what it must never print.
pub(super) struct Built {
    pub(super) store: Arc<dyn ObjectStore>,
    pub(super) redactor: Redactor,
    /// How an `s3://` store signs its requests.
    pub(super) signing: Option<Signing>,
}

/// `url` split into the base object_store joins keys to (no trailing `/`)
/// and its query string, which every request must carry (a SAS token).
fn split_query(url: &str) -> (&str, Option<&str>) {
    let without_fragment = url.split('#').next().unwrap_or(url);
    match without_fragment.split_once('?') {
        Some((base, query)) => (base.trim_end_matches('/'), Some(query)),
        None => (without_fragment.trim_end_matches('/'), None),
    }
}

/// Whether an `http(s)://` URL names a user (and maybe a password).
fn has_user_info(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split('/').next().unwrap_or(rest);
    authority.contains('@')
}

/// `url` with its scheme in lower case (schemes are case-insensitive,
/// RFC 3986 3.1: `HTTPS://` is `https://`).
pub(super) fn lower_scheme(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest))
            if scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) =>
        {
            format!("{}://{rest}", scheme.to_ascii_lowercase())
        }
        _ => url.to_string(),
    }
}

pub(super) fn object_store(
    url: &str,
    options: &RemoteOptions,
    counters: Arc<Counters>,
) -> Result<Built, RemoteError> {
    let url = &lower_scheme(url);
    let redactor = Redactor::for_url(url);
    for (name, value) in &options.s3_config {
        if is_credential_setting(name) {
            redactor.add(value);
        }
    }
    for variable in [
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_SSE_CUSTOMER_KEY_BASE64",
        "AWS_CONTAINER_AUTHORIZATION_TOKEN",
    ] {
        if let Ok(value) = std::env::var(variable) {
            redactor.add(&value);
        }
    }
    let configuration = |redactor: &Redactor| {
        let redactor = redactor.clone();
        move |e: object_store::Error| RemoteError::Configuration {
            url: redact_url(url),
            message: redactor.text(&error_chain(&e)),
        }
    };
    let retry = RetryConfig {
        backoff: BackoffConfig::default(),
        max_retries: options.max_retries,
        retry_timeout: options.retry_timeout,
    };
    let (base, query) = split_query(url);
    if base.starts_with("http://") || base.starts_with("https://") {
        let client = ClientOptions::new()
            .with_allow_http(base.starts_with("http://"))
            .with_timeout(options.timeout)
            .with_connect_timeout(options.connect_timeout);
        // object_store's HTTP store joins each key to the path of this URL
        // and keeps its query string: every request carries the token.
        let joined = match query {
            Some(query) => format!("{base}?{query}"),
            None => base.to_string(),
        };
        // Nothing secret in the URL: a redirect to a CDN may be followed.
        let redirects = if query.is_some() || has_user_info(base) {
            Redirects::SameOrigin
        } else {
            Redirects::AnyHost
        };
        let store = HttpBuilder::new()
            .with_url(joined)
            .with_client_options(client)
            .with_http_connector(Transport {
                redirects,
                max_object_bytes: options.max_object_bytes,
                longest_wait: super::transport::longest_wait(options),
            })
            .with_retry(retry)
            .build()
            .map_err(configuration(&redactor))?;
        return Ok(Built {
            store: Arc::new(CountingStore::new(Arc::new(store), counters)),
            redactor,
            signing: None,
        });
    }
    let unsupported = || RemoteError::UnsupportedUrl {
        url: redact_url(url),
    };
    let Some(rest) = base.strip_prefix("s3://") else {
        return Err(unsupported());
    };
    let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
    // A `#` would be a fragment, cut from the path: the keys under the
    // path as written could not be read.
    if bucket.is_empty() || query.is_some() || bucket.contains('@') || url.contains('#') {
        return Err(unsupported());
    }
    // The keys under the URL's path as written, as the AWS tools and s3fs
    // read them: object_store's `Path::from` would percent-encode `~`, `[`,
    // `%`, ... and read other keys.
    let prefix =
        object_store::path::Path::parse(prefix).map_err(|e| RemoteError::Configuration {
            url: redact_url(url),
            message: format!("the path is not an object key prefix: {e}"),
        })?;
    let mut builder = AmazonS3Builder::from_env()
        .with_bucket_name(bucket)
        // Signed requests (or a session token) never follow a redirect to
        // another host; the credential look-ups go through it too.
        .with_http_connector(Transport {
            redirects: Redirects::SameOrigin,
            max_object_bytes: options.max_object_bytes,
            longest_wait: super::transport::longest_wait(options),
        })
        .with_retry(retry)
        .with_config(
            AmazonS3ConfigKey::Client(object_store::ClientConfigKey::Timeout),
            format!("{}ms", options.timeout.as_millis()),
        )
        .with_config(
            AmazonS3ConfigKey::Client(object_store::ClientConfigKey::ConnectTimeout),
            format!("{}ms", options.connect_timeout.as_millis()),
        );
    for (name, value) in &options.s3_config {
        let key: AmazonS3ConfigKey = name.parse().map_err(configuration(&redactor))?;
        builder = builder.with_config(key, value);
    }
    // A local endpoint (MinIO, moto, ...) is usually plain HTTP.
    if builder
        .get_config_value(&AmazonS3ConfigKey::Endpoint)
        .is_some_and(|e| e.starts_with("http://"))
    {
        builder = builder.with_allow_http(true);
    }
    let decided = super::credentials::decide(builder, options, &redactor).map_err(|message| {
        RemoteError::Configuration {
            url: redact_url(url),
            message: redactor.text(&message),
        }
    })?;
    let (store, signing): (Arc<dyn ObjectStore>, Signing) = match decided {
        Decided::Builder(builder, signing) => {
            // Keys in the builder's settings are secrets whatever set them
            // (an environment variable of another name than those above).
            for key in [AmazonS3ConfigKey::SecretAccessKey, AmazonS3ConfigKey::Token] {
                if let Some(value) = builder.get_config_value(&key) {
                    redactor.add(&value);
                }
            }
            let store = builder.build().map_err(configuration(&redactor))?;
            (Arc::new(store), signing)
        }
        Decided::InstanceOrUnsigned(builder, chosen, signing) => {
            let unsigned = builder.clone().with_skip_signature(true).build();
            let signed = builder.build().map_err(configuration(&redactor))?;
            let unsigned = Arc::new(unsigned.map_err(configuration(&redactor))?);
            let store = InstanceOrUnsigned::new(signed, unsigned, chosen);
            (Arc::new(store), signing)
        }
    };
    let counting: Arc<dyn ObjectStore> = Arc::new(CountingStore::new(store, counters));
    let store = if prefix.as_ref().is_empty() {
        counting
    } else {
        Arc::new(PrefixStore::new(counting, prefix))
    };
    Ok(Built {
        store,
        redactor,
        signing: Some(signing),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// object_store's S3 setting names (both spellings) whose values are
    /// secrets, and some that are not.
    #[test]
    fn credential_settings() {
        for name in [
            "aws_access_key_id",
            "access_key_id",
            "aws_secret_access_key",
            "aws_session_token",
            "aws_token",
            "AWS_SESSION_TOKEN",
            "aws_sse_customer_key_base64",
            "sse_customer_key_base64",
        ] {
            assert!(is_credential_setting(name), "{name}");
        }
        for name in [
            "aws_region",
            "aws_endpoint_url",
            "aws_bucket",
            "aws_skip_signature",
        ] {
            assert!(!is_credential_setting(name), "{name}");
        }
    }
}
