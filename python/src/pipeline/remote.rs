//! The store of an array that zarr reads over HTTP or S3 (obstore's
//! `HTTPStore` / `S3Store`, fsspec's HTTP and S3 file systems), opened
//! again by the crate's remote layer from what Python found in zarr's
//! store: its URL and S3 settings.
//!
//! Read through it, a window of a shard costs what it costs the crate's own
//! reads: the shard's index kept (with its version, later reads conditional
//! on it), the inner chunks of a shard in one call, decoded straight into
//! zarr's output. Python decides which stores may be mapped (only those
//! whose every setting it can carry over), so a store configured beyond
//! that is read through zarr's store API as before; and which arrays share
//! one store (`_remote.shared_store`: those of one root URL, with the same
//! settings and environment).

use std::sync::Arc;
use std::time::Duration;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use zarrs_extension_codecs::remote::{
    FetchedKeys, RefreshingCredentials, RemoteOptions, RemoteStore, redact_url, unix_time,
};

/// How long the keys of a Python credential provider are kept at most.
const KEPT_AT_MOST: Duration = Duration::from_secs(300);

/// A remote store of the crate's, shared by the arrays opened on it.
#[pyclass(
    frozen,
    name = "RemoteStore",
    module = "zarrs_extension_codecs._native"
)]
pub struct SharedRemoteStore {
    pub(crate) store: Arc<RemoteStore>,
}

#[pymethods]
impl SharedRemoteStore {
    /// Open the store at `url` (a zarr store's root: `http(s)://...` or
    /// `s3://bucket/prefix`), with object_store's S3 settings `s3_config`
    /// (obstore's names, which object_store takes as they are), the signing
    /// choice `anonymous` and the remote layer's `shard_read_ahead_bytes`
    /// (its default when `None`), and obstore's `credential_provider` of an
    /// `S3Store` (a synchronous callable returning obstore's
    /// `S3Credential` dict), called with the GIL when keys are first
    /// needed and again a minute before its `expires_at`, or after 5
    /// minutes if sooner. `read_profiles=False` never reads the AWS profile
    /// files (`AWS_PROFILE`, `~/.aws/credentials`, `~/.aws/config`: their
    /// keys, `credential_process`, region and endpoint), as obstore never
    /// does: the store then signs with its settings, its provider, the
    /// `AWS_*` environment and container or instance credentials only.
    /// Nothing is fetched yet.
    ///
    /// Raises `ValueError` when the store cannot be set up; the message
    /// shows the URL redacted and no credential value.
    #[new]
    #[pyo3(signature = (
        url,
        s3_config=Vec::new(),
        anonymous=None,
        read_ahead=None,
        credential_provider=None,
        *,
        read_profiles=true,
    ))]
    fn new(
        url: &str,
        s3_config: Vec<(String, String)>,
        anonymous: Option<bool>,
        read_ahead: Option<u64>,
        credential_provider: Option<Py<PyAny>>,
        read_profiles: bool,
    ) -> PyResult<Self> {
        let mut options = RemoteOptions::default();
        options.s3_config = s3_config;
        options.anonymous = anonymous;
        options.read_profiles = read_profiles;
        if let Some(provider) = credential_provider {
            let keys = RefreshingCredentials::new("obstore's credential_provider", move || {
                // Called on a thread of the store's runtime, never on one
                // that holds the GIL: every read releases it first.
                Python::try_attach(|py| keys_of(provider.bind(py)))
                    .unwrap_or_else(|| Err("cannot be called: Python is shutting down".into()))
            })
            // obstore's boto3 provider reports its own time to live (30
            // minutes), not the keys' (botocore refreshes them 10-15
            // minutes before they expire): asked again every 5 minutes,
            // which costs a Python call.
            .kept_at_most(KEPT_AT_MOST);
            options.credentials = Some(Arc::new(keys));
        }
        if let Some(read_ahead) = read_ahead {
            options.shard_read_ahead_bytes = read_ahead;
        }
        let store = RemoteStore::open(url, &options)
            .map_err(|e| PyValueError::new_err(zarrs_extension_codecs::error_chain(&e)))?;
        Ok(Self {
            store: Arc::new(store),
        })
    }

    /// `url` as every message shows it: its user-info and query string
    /// (and fragment) as `***` (the crate's `remote::redact_url`, also for
    /// a password with a `/` or `?` not percent-encoded); text without
    /// `://` as it is.
    #[staticmethod]
    fn redact_url(url: &str) -> String {
        redact_url(url)
    }

    fn __repr__(&self) -> String {
        // `url()` has no user-info or query string (either may hold a
        // credential); settings are not shown.
        format!("RemoteStore({:?})", self.store.url())
    }
}

/// The keys `provider()` returns, as obstore's `S3Credential`:
/// `access_key_id`, `secret_access_key`, `token` (optional) and
/// `expires_at` (a `datetime` with a time zone, or `None`). What is wrong
/// is said by field and type, never by value.
fn keys_of(provider: &Bound<'_, PyAny>) -> Result<FetchedKeys, String> {
    let answer = provider.call0().map_err(|e| {
        let kind = e
            .get_type(provider.py())
            .name()
            .map_or_else(|_| "an exception".to_string(), |n| n.to_string());
        format!("raised {kind}: {}", e.value(provider.py()))
    })?;
    let Ok(fields) = answer.cast::<PyDict>() else {
        let kind = answer
            .get_type()
            .name()
            .map_or_else(|_| "?".to_string(), |n| n.to_string());
        if answer.hasattr("__await__").unwrap_or(false) {
            // Closed, so that Python does not warn of a coroutine never
            // awaited; zarr's store (obstore) reads the array instead.
            if answer.hasattr("close").unwrap_or(false) {
                let _ = answer.call_method0("close");
            }
            return Err("returned an awaitable: only synchronous providers are called".into());
        }
        return Err(format!("returned a {kind}, not a dict"));
    };
    let text = |name: &str, required: bool| -> Result<Option<String>, String> {
        match fields.get_item(name).ok().flatten() {
            Some(value) if value.is_none() && !required => Ok(None),
            Some(value) => match value.extract::<String>() {
                Ok(text) if !text.is_empty() => Ok(Some(text)),
                Ok(text) if text.is_empty() && !required => Ok(None),
                _ => Err(format!("returned a {name} that is not a non-empty str")),
            },
            None if required => Err(format!("returned no {name}")),
            None => Ok(None),
        }
    };
    let key_id = text("access_key_id", true)?.unwrap_or_default();
    let secret_key = text("secret_access_key", true)?.unwrap_or_default();
    let token = text("token", false)?;
    let expires = match fields.get_item("expires_at").ok().flatten() {
        None => None,
        Some(value) if value.is_none() => None,
        Some(value) => {
            let aware = value.getattr("tzinfo").is_ok_and(|tz| !tz.is_none());
            let seconds = value
                .call_method0("timestamp")
                .and_then(|t| t.extract::<f64>());
            match (aware, seconds) {
                (true, Ok(seconds)) => unix_time(seconds),
                _ => {
                    return Err(
                        "returned an expires_at that is not a datetime with a time zone".into(),
                    );
                }
            }
        }
    };
    Ok(FetchedKeys::new(key_id, secret_key, token, expires))
}
