//! The HTTP client under every remote store: object_store's requests, sent
//! by a reqwest client of this crate's own, so that two things object_store
//! leaves to reqwest's defaults hold for every request (chunks, metadata,
//! listings, credential look-ups), over HTTP(S) and S3 alike.
//!
//! **Redirects.** reqwest follows up to 10 redirects anywhere and drops
//! only `Authorization`, `Cookie` and `Proxy-Authorization` when the host
//! changes: an S3 session token (`x-amz-security-token`), SSE-C key headers
//! and a URL's own query token would go to whatever host a server (or
//! anyone on a plain-HTTP path) names. Here a redirect is followed only to
//! the same scheme, host and port, unless the store carries nothing secret
//! (an HTTP store whose URL has no user-info and no query string: public
//! data behind a CDN redirect keeps working); never from `https` to
//! `http`; at most [`MAX_REDIRECTS`] times. A refused redirect is an error
//! that names its target, redacted.
//!
//! **Bodies.** object_store sizes its buffers from what a response says of
//! itself (`Content-Length`, `Content-Range`): a server that announces
//! 2^50 bytes makes `Vec::with_capacity` fail, and Rust aborts the process.
//! Every body here is bounded by what was asked for: a ranged request by its
//! range, any other by [`RemoteOptions::max_object_bytes`](super::RemoteOptions::max_object_bytes);
//! a body that goes on past that fails its request, and its size hint never
//! exceeds the bound, so no buffer is sized by a server's number. An error
//! answer's body (which object_store reads whole into its message) is cut
//! at [`ERROR_BODY_BYTES`].
//!
//! **Retry-After.** object_store retries a `429` or a `503` (S3's
//! `SlowDown`) after its own backoff, a fraction of a second, whatever the
//! server asked. Here such an answer with a `Retry-After` header (seconds,
//! or an HTTP date) is handed to object_store only once that time has
//! passed, so its retry comes no sooner than asked. A wait longer than the
//! store's retry budget allows for one retry
//! ([`RemoteOptions::retry_timeout`](super::RemoteOptions::retry_timeout)
//! over `max_retries + 1`: no retry starts past the timeout, and each
//! retry may be asked to wait) is not waited, and nothing is waited when
//! the store makes no retries: the answer goes back at once.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime};

use http_body::{Body, Frame, SizeHint};
use object_store::ClientConfigKey;
use object_store::client::{
    HttpClient, HttpConnector, HttpError, HttpErrorKind, HttpRequest, HttpResponse,
    HttpResponseBody, HttpService,
};
use zarrs::storage::Bytes;

use crate::redact::redact_url;

/// Redirects followed for one request at most (reqwest's default, too).
pub const MAX_REDIRECTS: usize = 10;

/// Bytes of an error answer's body kept for its message: the S3 error
/// code and message come first in it.
pub const ERROR_BODY_BYTES: u64 = 8 << 10;

/// Where a store's requests may be redirected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Redirects {
    /// The same scheme, host and port only: the requests carry a secret
    /// (a signature, a session token, a URL's user-info or query).
    SameOrigin,
    /// Any `https` URL, or any URL from an `http` one: nothing secret.
    AnyHost,
}

/// object_store's [`HttpConnector`] for this crate's stores: a reqwest
/// client with [`Redirects`], whose bodies are bounded (see the module
/// doc).
#[derive(Debug, Clone)]
pub(super) struct Transport {
    pub(super) redirects: Redirects,
    /// Bound of a body asked for without a range.
    pub(super) max_object_bytes: u64,
    /// The longest `Retry-After` waited for (the store's retry timeout).
    pub(super) longest_wait: Duration,
}

impl HttpConnector for Transport {
    fn connect(&self, options: &object_store::ClientOptions) -> object_store::Result<HttpClient> {
        let client =
            client(options, self.redirects).map_err(|message| object_store::Error::Generic {
                store: "HTTP client",
                source: message.into(),
            })?;
        Ok(HttpClient::new(Bounded {
            client,
            max_object_bytes: self.max_object_bytes,
            longest_wait: self.longest_wait,
        }))
    }
}

/// A duration as object_store's `ClientOptions` reports it (humantime).
fn duration(
    options: &object_store::ClientOptions,
    key: ClientConfigKey,
) -> Result<Option<Duration>, String> {
    options
        .get_config_value(&key)
        .map(|text| {
            humantime::parse_duration(&text)
                .map_err(|e| format!("{}: {text:?} is not a duration: {e}", key.as_ref()))
        })
        .transpose()
}

/// A setting of `options` that is true, as object_store reads a boolean
/// (`true`, `1`, `yes`, `on`, `y`, any case; a value set from the
/// environment is kept as written).
fn flag(options: &object_store::ClientOptions, key: ClientConfigKey) -> bool {
    options
        .get_config_value(&key)
        .is_some_and(|v| super::credentials::parse_bool(&v) == Some(true))
}

/// Host names resolved with their addresses in a random order, as
/// object_store's own client does by default (`randomize_addresses`): the
/// connections to S3, which answers with several addresses, spread over
/// them.
struct ShuffledAddresses;

impl reqwest::dns::Resolve for ShuffledAddresses {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_string();
        Box::pin(async move {
            let mut addresses: Vec<std::net::SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            shuffle(&mut addresses);
            let addresses: reqwest::dns::Addrs = Box::new(addresses.into_iter());
            Ok(addresses)
        })
    }
}

/// Fisher-Yates with a small generator seeded from the clock and a count:
/// the order need only differ between look-ups, not be unpredictable.
fn shuffle<T>(items: &mut [T]) {
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let mut state = u64::from(nanos)
        ^ CALLS
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        | 1;
    for i in (1..items.len()).rev() {
        // xorshift64
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let j = (state % (i as u64 + 1)) as usize;
        items.swap(i, j);
    }
}

/// The reqwest client object_store would build from `options` (the
/// settings a store or the environment can give it), with `redirects`.
fn client(
    options: &object_store::ClientOptions,
    redirects: Redirects,
) -> Result<reqwest::Client, String> {
    let mut builder = reqwest::ClientBuilder::new()
        .redirect(redirect_policy(redirects))
        // As object_store does: a compressed body would not be the length
        // its headers give, and ranges are of the stored bytes.
        .no_gzip()
        .no_brotli()
        .no_zstd()
        .no_deflate()
        .https_only(!flag(options, ClientConfigKey::AllowHttp));
    let agent = options.get_config_value(&ClientConfigKey::UserAgent);
    builder = builder.user_agent(agent.unwrap_or_else(|| {
        concat!("zarrs_extension_codecs/", env!("CARGO_PKG_VERSION")).to_string()
    }));
    if let Some(timeout) = duration(options, ClientConfigKey::Timeout)? {
        builder = builder.timeout(timeout);
    }
    if let Some(timeout) = duration(options, ClientConfigKey::ConnectTimeout)? {
        builder = builder.connect_timeout(timeout);
    }
    if let Some(timeout) = duration(options, ClientConfigKey::ReadTimeout)? {
        builder = builder.read_timeout(timeout);
    }
    if let Some(timeout) = duration(options, ClientConfigKey::PoolIdleTimeout)? {
        builder = builder.pool_idle_timeout(timeout);
    }
    if let Some(max) = options.get_config_value(&ClientConfigKey::PoolMaxIdlePerHost) {
        let max = max
            .parse()
            .map_err(|e| format!("pool_max_idle_per_host: {max:?}: {e}"))?;
        builder = builder.pool_max_idle_per_host(max);
    }
    if let Some(url) = options.get_config_value(&ClientConfigKey::ProxyUrl) {
        let mut proxy = reqwest::Proxy::all(&url)
            .map_err(|e| format!("proxy_url {}: {e}", redact_url(&url)))?;
        if let Some(excludes) = options.get_config_value(&ClientConfigKey::ProxyExcludes) {
            proxy = proxy.no_proxy(reqwest::NoProxy::from_string(&excludes));
        }
        if let Some(pem) = options.get_config_value(&ClientConfigKey::ProxyCaCertificate) {
            let certificate = reqwest::Certificate::from_pem(pem.as_bytes())
                .map_err(|e| format!("proxy_ca_certificate: {e}"))?;
            builder = builder.tls_certs_merge(std::iter::once(certificate));
        }
        builder = builder.proxy(proxy);
    }
    if flag(options, ClientConfigKey::AllowInvalidCertificates) {
        builder = builder.tls_danger_accept_invalid_certs(true);
    }
    if flag(options, ClientConfigKey::Http1Only) {
        builder = builder.http1_only();
    }
    if flag(options, ClientConfigKey::Http2Only) {
        builder = builder.http2_prior_knowledge();
    }
    // object_store's default: on unless set otherwise.
    let randomize = options
        .get_config_value(&ClientConfigKey::RandomizeAddresses)
        .is_none_or(|v| super::credentials::parse_bool(&v) != Some(false));
    if randomize {
        builder = builder.dns_resolver(std::sync::Arc::new(ShuffledAddresses));
    }
    builder.build().map_err(|e| crate::error_chain(&e))
}

/// Whether a redirect from `from` to `to` stays on one origin.
fn same_origin(from: &reqwest::Url, to: &reqwest::Url) -> bool {
    from.scheme() == to.scheme()
        && from.host_str() == to.host_str()
        && from.port_or_known_default() == to.port_or_known_default()
}

/// Why a redirect from `from` (the request's first URL) to `to`, after
/// `hops` redirects, is not followed; `None` to follow it.
pub(super) fn refused_redirect(
    redirects: Redirects,
    from: &str,
    to: &str,
    hops: usize,
) -> Option<String> {
    let shown = redact_url(to);
    let (Ok(from), Ok(to)) = (reqwest::Url::parse(from), reqwest::Url::parse(to)) else {
        return Some(format!("a redirect to {shown}, not a URL, is not followed"));
    };
    if hops >= MAX_REDIRECTS {
        return Some(format!(
            "more than {MAX_REDIRECTS} redirects (the last to {shown}) are not followed"
        ));
    }
    if from.scheme() == "https" && to.scheme() != "https" {
        return Some(format!(
            "a redirect from https to {shown} is not followed: it would send the request unencrypted"
        ));
    }
    if redirects == Redirects::SameOrigin && !same_origin(&from, &to) {
        return Some(format!(
            "a redirect to another host ({shown}) is not followed: the requests carry credentials (a signature, a session token, or the URL's user-info or query string), which that host must not get; open the store at the URL it redirects to"
        ));
    }
    None
}

fn redirect_policy(redirects: Redirects) -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(move |attempt| {
        let previous = attempt.previous();
        // The first URL of the chain is the request's own.
        let from = previous.first().map(reqwest::Url::as_str).unwrap_or("");
        let hops = previous.len().saturating_sub(1);
        match refused_redirect(redirects, from, attempt.url().as_str(), hops) {
            Some(why) => attempt.error(why),
            None => attempt.follow(),
        }
    })
}

/// The client, with every response body bounded.
#[derive(Debug)]
struct Bounded {
    client: reqwest::Client,
    max_object_bytes: u64,
    longest_wait: Duration,
}

/// The bytes a `Range` header asks for (`bytes=a-b`, `bytes=-n`); `None`
/// for an open range or no header.
fn range_length(request: &HttpRequest) -> Option<u64> {
    let value = request.headers().get("range")?.to_str().ok()?;
    let spec = value.trim().strip_prefix("bytes=")?;
    if spec.contains(',') {
        return None;
    }
    let (start, end) = spec.split_once('-')?;
    match (start.trim(), end.trim()) {
        ("", n) => n.parse().ok(),
        (_, "") => None,
        (a, b) => {
            let (a, b): (u64, u64) = (a.parse().ok()?, b.parse().ok()?);
            b.checked_sub(a)?.checked_add(1)
        }
    }
}

#[async_trait::async_trait]
impl HttpService for Bounded {
    async fn call(&self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        let asked = range_length(&request).unwrap_or(self.max_object_bytes);
        let response = self.client.call(request).await?;
        let (mut parts, body) = response.into_parts();
        let retry_after = parts
            .headers
            .get("retry-after")
            .and_then(|v| v.to_str().ok());
        if let Some(wait) = asked_wait(parts.status.as_u16(), retry_after, SystemTime::now())
            .filter(|wait| *wait <= self.longest_wait)
        {
            tokio::time::sleep(wait).await;
        }
        let limit = if parts.status.is_success() {
            Limit::Fail(asked.min(self.max_object_bytes))
        } else {
            // The length it announces is no longer the body's.
            parts.headers.remove("content-length");
            Limit::Cut(ERROR_BODY_BYTES)
        };
        let bound = limit.left();
        let body = HttpResponseBody::new(BoundedBody { body, limit, bound });
        Ok(HttpResponse::from_parts(parts, body))
    }
}

/// The longest `Retry-After` a store with `options` waits for: nothing
/// when it makes no retries, else its retry timeout shared among the
/// retries it may make.
pub(super) fn longest_wait(options: &super::RemoteOptions) -> Duration {
    if options.max_retries == 0 {
        return Duration::ZERO;
    }
    let retries = u32::try_from(options.max_retries).unwrap_or(u32::MAX);
    options.retry_timeout / retries.saturating_add(1)
}

/// How long an answer of `status` asks to be left alone before the next
/// request: a `429` or `503` by its `Retry-After` (seconds, or an HTTP
/// date, taken relative to `now`); `None` for other answers or no readable
/// header.
fn asked_wait(status: u16, retry_after: Option<&str>, now: SystemTime) -> Option<Duration> {
    if !matches!(status, 429 | 503) {
        return None;
    }
    let value = retry_after?.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = http_date(value)?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// An HTTP date in the form every sender must use (RFC 9110's IMF-fixdate,
/// `Sun, 06 Nov 1994 08:49:37 GMT`); the obsolete forms are not read.
fn http_date(value: &str) -> Option<SystemTime> {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let mut fields = value.split_ascii_whitespace();
    let (_weekday, day, month, year, time, zone) = (
        fields.next()?,
        fields.next()?,
        fields.next()?,
        fields.next()?,
        fields.next()?,
        fields.next()?,
    );
    if zone != "GMT" || fields.next().is_some() {
        return None;
    }
    let day: u64 = day.parse().ok()?;
    let month = MONTHS.iter().position(|m| *m == month)? as u64 + 1;
    let year: u64 = year.parse().ok()?;
    let mut hms = time.split(':').map(|n| n.parse::<u64>().ok());
    let (h, m, sec) = (hms.next()??, hms.next()??, hms.next()??);
    // Four digits, as the format has them: no arithmetic below can
    // overflow, whatever a server sends.
    if !(1..=31).contains(&day) || !(1970..=9999).contains(&year) || h > 23 || m > 59 || sec > 60 {
        return None;
    }
    // Days since 1970-01-01 of a proleptic Gregorian date (the usual
    // count from 1 March, so that a leap day ends the year).
    let (y, mo) = if month <= 2 {
        (year - 1, month + 9)
    } else {
        (year, month - 3)
    };
    let era_days = 365 * y + y / 4 - y / 100 + y / 400 + (153 * mo + 2) / 5 + day - 1;
    let days = era_days.checked_sub(719_468)?;
    let seconds = days * 86_400 + h * 3_600 + m * 60 + sec;
    std::time::UNIX_EPOCH.checked_add(Duration::from_secs(seconds))
}

/// What a body may carry, and what happens past it.
#[derive(Debug, Clone, Copy)]
enum Limit {
    /// This many bytes more; past them, the body fails.
    Fail(u64),
    /// This many bytes more; past them, the body ends.
    Cut(u64),
    /// Failed: nothing more is read of it.
    Failed,
}

impl Limit {
    fn left(self) -> u64 {
        match self {
            Self::Fail(n) | Self::Cut(n) => n,
            Self::Failed => 0,
        }
    }
}

/// The most a size hint of a body says it carries at least: object_store
/// sets a buffer aside by it (`HttpResponseBody::bytes`), and a server's
/// number must size no buffer.
const HINT_AT_MOST: u64 = 64 << 10;

/// A response body that carries at most its [`Limit`], and never says it
/// will carry more.
#[derive(Debug)]
struct BoundedBody {
    body: HttpResponseBody,
    limit: Limit,
    /// The limit it started with, for the message.
    bound: u64,
}

/// Why a body was refused.
#[derive(Debug, thiserror::Error)]
#[error(
    "the server sent more than the {0} bytes asked for (a response that does not match its request, or an object larger than RemoteOptions::max_object_bytes)"
)]
struct TooLong(u64);

impl Body for BoundedBody {
    type Data = Bytes;
    type Error = HttpError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, HttpError>>> {
        if let Limit::Cut(0) | Limit::Failed = self.limit {
            return Poll::Ready(None);
        }
        let frame = match Pin::new(&mut self.body).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => frame,
            other => return other,
        };
        let Some(data) = frame.data_ref() else {
            return Poll::Ready(Some(Ok(frame)));
        };
        let len = data.len() as u64;
        match self.limit {
            Limit::Fail(left) if len > left => {
                // Nothing more is read of it: the request fails.
                self.limit = Limit::Failed;
                Poll::Ready(Some(Err(HttpError::new(
                    HttpErrorKind::Decode,
                    TooLong(self.bound),
                ))))
            }
            Limit::Fail(left) => {
                self.limit = Limit::Fail(left - len);
                Poll::Ready(Some(Ok(frame)))
            }
            Limit::Failed => Poll::Ready(None),
            Limit::Cut(left) => {
                let data = frame.into_data().unwrap_or_default();
                let kept = data.slice(..(len.min(left) as usize));
                self.limit = Limit::Cut(left - kept.len() as u64);
                Poll::Ready(Some(Ok(Frame::data(kept))))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self.limit, Limit::Cut(0) | Limit::Failed) || self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        let inner = self.body.size_hint();
        let left = self.limit.left();
        let mut hint = SizeHint::new();
        hint.set_lower(inner.lower().min(left).min(HINT_AT_MOST));
        hint.set_upper(inner.upper().map_or(left, |upper| upper.min(left)));
        hint
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirects_to_another_host_are_refused_for_stores_with_secrets() {
        let from = "https://bucket.s3.example.com/a/zarr.json";
        let same = "https://bucket.s3.example.com/b/zarr.json";
        let other = "https://evil.example.net/a?token=secret";
        assert_eq!(refused_redirect(Redirects::SameOrigin, from, same, 0), None);
        let why = refused_redirect(Redirects::SameOrigin, from, other, 0).unwrap();
        assert!(why.contains("another host"), "{why}");
        assert!(!why.contains("secret"), "the target is redacted: {why}");
        // Another port is another origin.
        let port = "https://bucket.s3.example.com:8443/a";
        assert!(refused_redirect(Redirects::SameOrigin, from, port, 0).is_some());
        // With nothing secret, another host is fine.
        assert_eq!(refused_redirect(Redirects::AnyHost, from, other, 0), None);
    }

    #[test]
    fn downgrades_and_long_chains_are_refused_always() {
        let from = "https://data.example.com/a";
        let why = refused_redirect(Redirects::AnyHost, from, "http://data.example.com/a", 0);
        assert!(why.unwrap().contains("unencrypted"));
        let why = refused_redirect(Redirects::AnyHost, from, from, MAX_REDIRECTS);
        assert!(why.unwrap().contains("more than 10"));
        assert_eq!(
            refused_redirect(Redirects::AnyHost, from, from, MAX_REDIRECTS - 1),
            None
        );
        // From http, http is no downgrade.
        let plain = "http://127.0.0.1:8000/a";
        assert_eq!(
            refused_redirect(Redirects::SameOrigin, plain, "http://127.0.0.1:8000/b", 0),
            None
        );
    }

    fn with_range(value: Option<&str>) -> HttpRequest {
        let mut request = HttpRequest::new(Bytes::new().into());
        if let Some(value) = value {
            request
                .headers_mut()
                .insert("range", value.parse().unwrap());
        }
        request
    }

    /// Worked out from RFC 9110 14.1.2: `a-b` is b - a + 1 bytes.
    #[test]
    fn range_lengths() {
        assert_eq!(range_length(&with_range(Some("bytes=0-0"))), Some(1));
        assert_eq!(range_length(&with_range(Some("bytes=10-19"))), Some(10));
        assert_eq!(range_length(&with_range(Some("bytes=-16"))), Some(16));
        assert_eq!(range_length(&with_range(Some("bytes=5-"))), None);
        assert_eq!(range_length(&with_range(Some("bytes=9-3"))), None);
        assert_eq!(range_length(&with_range(Some("bytes=0-1,4-5"))), None);
        assert_eq!(range_length(&with_range(None)), None);
    }

    /// A body of `chunks`, announced as `announced` bytes long.
    fn body(chunks: &[&'static [u8]], announced: u64) -> HttpResponseBody {
        #[derive(Debug)]
        struct Chunks(Vec<Bytes>, u64);
        impl Body for Chunks {
            type Data = Bytes;
            type Error = HttpError;
            fn poll_frame(
                mut self: Pin<&mut Self>,
                _: &mut Context<'_>,
            ) -> Poll<Option<Result<Frame<Bytes>, HttpError>>> {
                if self.0.is_empty() {
                    return Poll::Ready(None);
                }
                Poll::Ready(Some(Ok(Frame::data(self.0.remove(0)))))
            }
            fn size_hint(&self) -> SizeHint {
                SizeHint::with_exact(self.1)
            }
        }
        HttpResponseBody::new(Chunks(
            chunks.iter().map(|c| Bytes::from_static(c)).collect(),
            announced,
        ))
    }

    fn collect(body: BoundedBody) -> Result<Vec<u8>, String> {
        let stream = HttpResponseBody::new(body).bytes_stream();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime.block_on(async {
            use futures::TryStreamExt;
            stream
                .try_fold(Vec::new(), |mut all, b| async move {
                    all.extend_from_slice(&b);
                    Ok(all)
                })
                .await
                .map_err(|e| crate::error_chain(&e))
        })
    }

    #[test]
    fn a_body_announcing_more_than_asked_has_a_bounded_size_hint() {
        let lying = BoundedBody {
            body: body(&[b"abcd"], 1 << 50),
            limit: Limit::Fail(4),
            bound: 4,
        };
        assert_eq!(lying.size_hint().lower(), 4);
        assert_eq!(lying.size_hint().upper(), Some(4));
        assert_eq!(collect(lying).unwrap(), b"abcd");
        // Unranged, bounded by 2 GiB: still no more than 64 KiB set aside
        // on the server's word.
        let unranged = BoundedBody {
            body: body(&[b"abcd"], 1 << 50),
            limit: Limit::Fail(2 << 30),
            bound: 2 << 30,
        };
        assert_eq!(unranged.size_hint().lower(), HINT_AT_MOST);
    }

    #[test]
    fn a_failed_body_stays_ended() {
        let mut long = BoundedBody {
            body: body(&[b"abcdef", b"gh"], 8),
            limit: Limit::Fail(3),
            bound: 3,
        };
        let waker = std::task::Waker::noop();
        let mut cx = Context::from_waker(waker);
        assert!(matches!(
            Pin::new(&mut long).poll_frame(&mut cx),
            Poll::Ready(Some(Err(_)))
        ));
        assert!(long.is_end_stream());
        assert!(matches!(
            Pin::new(&mut long).poll_frame(&mut cx),
            Poll::Ready(None)
        ));
    }

    #[test]
    fn booleans_as_object_store_reads_them() {
        for (value, set) in [
            ("true", true),
            ("1", true),
            ("YES", true),
            ("on", true),
            ("false", false),
            ("0", false),
        ] {
            let options =
                object_store::ClientOptions::new().with_config(ClientConfigKey::AllowHttp, value);
            assert_eq!(flag(&options, ClientConfigKey::AllowHttp), set, "{value}");
        }
    }

    #[test]
    fn retry_after_in_seconds_and_as_a_date() {
        let now = std::time::UNIX_EPOCH + Duration::from_secs(784_111_777);
        for status in [429, 503] {
            assert_eq!(
                asked_wait(status, Some("7"), now),
                Some(Duration::from_secs(7))
            );
            // RFC 9110's example date is 784111777 s after the epoch.
            assert_eq!(
                asked_wait(status, Some("Sun, 06 Nov 1994 08:49:47 GMT"), now),
                Some(Duration::from_secs(10))
            );
            // A date past is no wait.
            assert_eq!(
                asked_wait(status, Some("Sun, 06 Nov 1994 08:49:00 GMT"), now),
                Some(Duration::ZERO)
            );
        }
        assert_eq!(
            http_date("Sat, 28 Nov 2026 14:11:49 GMT"),
            Some(std::time::UNIX_EPOCH + Duration::from_secs(1_795_875_109))
        );
        // Leap day, and the end of a year.
        let leap = http_date("Thu, 29 Feb 2024 00:00:00 GMT").unwrap();
        assert_eq!(
            leap,
            std::time::UNIX_EPOCH + Duration::from_secs(1_709_164_800)
        );
        let new_year = http_date("Sun, 31 Dec 2023 23:59:59 GMT").unwrap();
        assert_eq!(
            new_year,
            std::time::UNIX_EPOCH + Duration::from_secs(1_704_067_199)
        );
        for unread in [
            "soon",
            "-3",
            "Sun, 06 Nov 1994 08:49:37 PST",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            // Years no server means, which would overflow the arithmetic.
            "Mon, 01 Jan 300000000000 00:00:00 GMT",
            "Mon, 01 Jan 18446744073709551615 00:00:00 GMT",
        ] {
            assert_eq!(asked_wait(503, Some(unread), now), None, "{unread}");
        }
        assert_eq!(asked_wait(500, Some("7"), now), None);
        assert_eq!(asked_wait(503, None, now), None);
    }

    #[test]
    fn a_shuffle_keeps_every_item() {
        let mut items: Vec<u32> = (0..50).collect();
        shuffle(&mut items);
        let mut sorted = items.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..50).collect::<Vec<_>>());
    }

    #[test]
    fn a_body_longer_than_asked_fails() {
        let long = BoundedBody {
            body: body(&[b"abc", b"defg"], 7),
            limit: Limit::Fail(5),
            bound: 5,
        };
        let error = collect(long).unwrap_err();
        assert!(error.contains("more than"), "{error}");
    }

    #[test]
    fn an_error_body_is_cut() {
        let cut = BoundedBody {
            body: body(&[b"<Error><Code>", b"SlowDown</Code>", b"...."], 1 << 40),
            limit: Limit::Cut(20),
            bound: 20,
        };
        assert_eq!(cut.size_hint().upper(), Some(20));
        assert_eq!(collect(cut).unwrap(), b"<Error><Code>SlowDow");
    }
}
