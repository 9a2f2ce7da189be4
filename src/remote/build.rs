//! The object_store behind a URL: its HTTP store for `http(s)://`, its S3
//! store for `s3://bucket/prefix`, wrapped to count requests.

use std::sync::Arc;

use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::http::HttpBuilder;
use object_store::prefix::PrefixStore;
use object_store::{BackoffConfig, ClientOptions, ObjectStore, RetryConfig};

use super::counting::{Counters, CountingStore};
use super::{RemoteError, RemoteOptions};
use crate::error_chain;

/// Environment variables that give the S3 store credentials other than an
/// access key (web identity, container credentials): with none of them and
/// no access key, `s3://` reads are anonymous.
const CREDENTIAL_VARIABLES: [&str; 3] = [
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
];

pub(super) fn object_store(
    url: &str,
    options: &RemoteOptions,
    counters: Arc<Counters>,
) -> Result<Arc<dyn ObjectStore>, RemoteError> {
    let configuration = |e: object_store::Error| RemoteError::Configuration {
        url: url.to_string(),
        message: error_chain(&e),
    };
    let retry = RetryConfig {
        backoff: BackoffConfig::default(),
        max_retries: options.max_retries,
        retry_timeout: options.retry_timeout,
    };
    let trimmed = url.trim_end_matches('/');
    if trimmed.starts_with("http://") || trimmed.starts_with("https://") {
        let client = ClientOptions::new()
            .with_allow_http(trimmed.starts_with("http://"))
            .with_timeout(options.timeout)
            .with_connect_timeout(options.connect_timeout);
        let store = HttpBuilder::new()
            .with_url(trimmed)
            .with_client_options(client)
            .with_retry(retry)
            .build()
            .map_err(configuration)?;
        return Ok(Arc::new(CountingStore::new(Arc::new(store), counters)));
    }
    let Some(rest) = trimmed.strip_prefix("s3://") else {
        return Err(RemoteError::UnsupportedUrl {
            url: url.to_string(),
        });
    };
    let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
    if bucket.is_empty() {
        return Err(RemoteError::UnsupportedUrl {
            url: url.to_string(),
        });
    }
    let mut builder = AmazonS3Builder::from_env()
        .with_bucket_name(bucket)
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
        let key: AmazonS3ConfigKey = name.parse().map_err(configuration)?;
        builder = builder.with_config(key, value);
    }
    // A local endpoint (MinIO, moto, ...) is usually plain HTTP.
    if builder
        .get_config_value(&AmazonS3ConfigKey::Endpoint)
        .is_some_and(|e| e.starts_with("http://"))
    {
        builder = builder.with_allow_http(true);
    }
    let anonymous = options.anonymous.unwrap_or_else(|| {
        builder
            .get_config_value(&AmazonS3ConfigKey::AccessKeyId)
            .is_none()
            && std::env::var_os("AWS_SKIP_SIGNATURE").is_none()
            && CREDENTIAL_VARIABLES
                .iter()
                .all(|v| std::env::var_os(v).is_none())
    });
    if anonymous {
        builder = builder.with_skip_signature(true);
    }
    let store = builder.build().map_err(configuration)?;
    let counting: Arc<dyn ObjectStore> = Arc::new(CountingStore::new(Arc::new(store), counters));
    if prefix.is_empty() {
        Ok(counting)
    } else {
        Ok(Arc::new(PrefixStore::new(counting, prefix)))
    }
}
