//! [`RefreshingCredentials`]: keys that a function hands out with an
//! expiry, asked for again shortly before they expire. A profile's
//! `credential_process` is one such function; a caller's own (the Python
//! package's obstore credential providers) is another.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use object_store::CredentialProvider;
use object_store::aws::AwsCredential;

/// How long before their expiry held keys are replaced: time for a request
/// signed with them to reach S3, and for its retries.
pub const REFRESH_BEFORE: Duration = Duration::from_secs(60);

/// Keys, as a [`RefreshingCredentials`] function hands them out.
pub struct FetchedKeys {
    pub(crate) credential: AwsCredential,
    pub(crate) expires: Option<SystemTime>,
}

impl FetchedKeys {
    /// An access key, its secret and session token, expiring at `expires`
    /// (never if `None`: the function is not called again).
    #[must_use]
    pub fn new(
        key_id: impl Into<String>,
        secret_key: impl Into<String>,
        token: Option<String>,
        expires: Option<SystemTime>,
    ) -> Self {
        Self {
            credential: AwsCredential {
                key_id: key_id.into(),
                secret_key: secret_key.into(),
                token,
            },
            expires,
        }
    }
}

/// The time `seconds` after the Unix epoch (before it, if negative), as an
/// expiry of [`FetchedKeys`]: a time before what `SystemTime` holds (or
/// NaN) is long past (the epoch), one after it never (`None`).
#[must_use]
pub fn unix_time(seconds: f64) -> Option<SystemTime> {
    let span = Duration::try_from_secs_f64(seconds.abs()).ok();
    if seconds >= 0.0 {
        span.and_then(|after| UNIX_EPOCH.checked_add(after))
    } else {
        Some(
            span.and_then(|before| UNIX_EPOCH.checked_sub(before))
                .unwrap_or(UNIX_EPOCH),
        )
    }
}

/// The expiry an RFC 3339 `time` gives keys (`Expiration` of a
/// `credential_process` output or a container agent's answer), to the
/// nanosecond.
///
/// # Errors
/// chrono's, when `time` is not an RFC 3339 time.
pub(crate) fn expiry_of(time: &str) -> Result<Option<SystemTime>, chrono::ParseError> {
    let at = chrono::DateTime::parse_from_rfc3339(time)?;
    Ok(unix_time(
        at.timestamp() as f64 + f64::from(at.timestamp_subsec_nanos()) * 1e-9,
    ))
}

/// Keys handed out, as they are kept.
#[derive(Clone)]
struct Held {
    credential: Arc<AwsCredential>,
    expires: Option<SystemTime>,
}

/// Keys this close to their expiry are not handed to a request that
/// would otherwise wait for a refresh under way: it waits.
const STILL_VALID_FOR: Duration = Duration::from_secs(10);

impl Held {
    /// Whether the keys may sign a request sent at `now` while another
    /// request refreshes them.
    fn still_valid(&self, now: SystemTime) -> bool {
        self.expires.is_none_or(|expires| {
            now.checked_add(STILL_VALID_FOR)
                .is_some_and(|soon| soon < expires)
        })
    }

    /// Whether the keys need no refresh for a request sent at `now`.
    fn fresh(&self, now: SystemTime) -> bool {
        self.expires.is_none_or(|expires| {
            now.checked_add(REFRESH_BEFORE)
                .is_some_and(|soon| soon < expires)
        })
    }
}

impl std::fmt::Debug for FetchedKeys {
    // No key, not even the access key's id (`RemoteOptions` hides it too).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FetchedKeys")
            .field("credential", &"***")
            .field("expires", &self.expires.map(shown))
            .finish()
    }
}

/// `at` as an RFC 3339 time (UTC), or as seconds from the Unix epoch where
/// chrono cannot show it.
pub(crate) fn shown(at: SystemTime) -> String {
    let seconds = match at.duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_secs()).ok(),
        Err(before) => i64::try_from(before.duration().as_secs()).ok().map(|s| -s),
    };
    seconds
        .and_then(|s| chrono::DateTime::from_timestamp(s, 0))
        .map_or_else(|| format!("{at:?}"), |time| time.to_rfc3339())
}

/// The function that hands out keys, and what messages call it.
type Fetch = dyn Fn() -> Result<FetchedKeys, String> + Send + Sync;

/// An object_store credential provider of keys handed out by a function,
/// kept until [`REFRESH_BEFORE`] their expiry.
///
/// The function runs at the first request that needs keys, and again when
/// the keys it gave are about to expire; requests that need keys meanwhile
/// wait for that one call. It may block (run a process, call Python): it
/// runs on the runtime's blocking threads. A call that fails, or gives
/// keys already expired, fails the request with a message that starts
/// with `source` (e.g. "the credential_process of profile 'x' in FILE")
/// followed by what the function said; the next request calls it again.
///
/// ```
/// use std::sync::Arc;
/// use zarrs_extension_codecs::remote::{FetchedKeys, RefreshingCredentials, RemoteOptions};
///
/// let keys = RefreshingCredentials::new("my vault", || {
///     // ... ask a vault, a token service, ...
///     Ok(FetchedKeys::new("AKID", "secret", None, None))
/// });
/// let mut options = RemoteOptions::default();
/// options.credentials = Some(Arc::new(keys));
/// ```
pub struct RefreshingCredentials {
    source: String,
    fetch: Arc<Fetch>,
    /// How long keys are kept at most, whatever their expiry says.
    most: Option<Duration>,
    state: tokio::sync::Mutex<State>,
    /// Calls of the function that have ended: a request that waited while
    /// one failed gets its error instead of calling again.
    ended: AtomicU64,
    /// The keys of the last call that gave some, readable while a call is
    /// under way: a request that finds them still valid uses them rather
    /// than wait for the refresh.
    latest: std::sync::Mutex<Option<Held>>,
}

/// What the last call gave.
#[derive(Default)]
struct State {
    keys: Option<Held>,
    /// The error of the last call if it failed, and its number in `ended`.
    failed: Option<(u64, String)>,
}

impl std::fmt::Debug for RefreshingCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RefreshingCredentials({})", self.source)
    }
}

/// The most of a function's error a message shows.
const ERROR_SHOWN: usize = 600;

impl RefreshingCredentials {
    /// Keys handed out by `fetch`, which messages call `source`.
    pub fn new(
        source: impl Into<String>,
        fetch: impl Fn() -> Result<FetchedKeys, String> + Send + Sync + 'static,
    ) -> Self {
        Self {
            source: source.into(),
            fetch: Arc::new(fetch),
            most: None,
            state: tokio::sync::Mutex::new(State::default()),
            ended: AtomicU64::new(0),
            latest: std::sync::Mutex::new(None),
        }
    }

    /// These credentials, with keys kept at most `most` (less if they
    /// expire sooner): for a function whose expiry may be later than the
    /// keys' own (obstore's boto3 provider reports its own time to live,
    /// not botocore's), and that is cheap to call again.
    #[must_use]
    pub fn kept_at_most(mut self, most: Duration) -> Self {
        self.most = Some(most);
        self
    }

    /// Call the function once, off the runtime's threads.
    async fn fetch(&self) -> Result<FetchedKeys, String> {
        let fetch = self.fetch.clone();
        let mut keys = match tokio::runtime::Handle::try_current() {
            Ok(handle) => handle
                .spawn_blocking(move || fetch())
                .await
                .map_err(|e| format!("did not finish: {e}"))??,
            Err(_) => fetch()?,
        };
        if let Some(expires) = keys.expires
            && expires <= SystemTime::now()
        {
            return Err(format!("gave keys that expired at {}", shown(expires)));
        }
        if let Some(most) = self.most {
            // Kept until `most` from now: fresh until REFRESH_BEFORE that.
            let until = SystemTime::now().checked_add(most + REFRESH_BEFORE);
            keys.expires = match (keys.expires, until) {
                (Some(expires), Some(until)) => Some(expires.min(until)),
                (expires, until) => expires.or(until),
            };
        }
        Ok(keys)
    }
}

/// `why` on one line, URLs shown as [`redact_url`](super::redact_url)
/// shows them (a user-info or query string may be a secret), and cut to
/// its first [`ERROR_SHOWN`] bytes.
fn cleaned(why: &str) -> String {
    let line = crate::redact::redact_urls_in(&why.split_whitespace().collect::<Vec<_>>().join(" "));
    match line
        .char_indices()
        .map(|(at, _)| at)
        .find(|&at| at > ERROR_SHOWN)
    {
        Some(cut) => format!("{}...", &line[..cut]),
        None => line,
    }
}

#[async_trait::async_trait]
impl CredentialProvider for RefreshingCredentials {
    type Credential = AwsCredential;

    async fn get_credential(&self) -> object_store::Result<Arc<AwsCredential>> {
        let seen = self.ended.load(Ordering::Acquire);
        // Held across the call, so that requests waiting meanwhile share it;
        // but keys still valid for a while serve a request at once rather
        // than hold it behind a refresh (a credential_process may take
        // seconds, a login minutes).
        let mut state = match self.state.try_lock() {
            Ok(state) => state,
            Err(_) => {
                let latest = self
                    .latest
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .clone();
                if let Some(keys) = latest.filter(|k| k.still_valid(SystemTime::now())) {
                    return Ok(keys.credential);
                }
                self.state.lock().await
            }
        };
        if let Some(keys) = state.keys.as_ref().filter(|k| k.fresh(SystemTime::now())) {
            return Ok(keys.credential.clone());
        }
        let error = |why: &str| object_store::Error::Generic {
            store: "S3",
            source: format!("{} {why}", self.source).into(),
        };
        // A call that ended while this request waited failed: its error,
        // not another call (a failing function would be called once per
        // request in flight, one after the other).
        if let Some((call, why)) = &state.failed
            && *call > seen
        {
            return Err(error(why));
        }
        let fetched = self.fetch().await;
        let call = self.ended.fetch_add(1, Ordering::AcqRel) + 1;
        match fetched {
            Ok(keys) => {
                let credential = Arc::new(keys.credential);
                let held = Held {
                    credential: credential.clone(),
                    expires: keys.expires,
                };
                *self
                    .latest
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(held.clone());
                state.keys = Some(held);
                state.failed = None;
                Ok(credential)
            }
            Err(why) => {
                let why = cleaned(&why);
                let returned = error(&why);
                state.failed = Some((call, why));
                Err(returned)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    fn keys(expires: Option<SystemTime>) -> FetchedKeys {
        FetchedKeys::new("A", "s3cr3t", None, expires)
    }

    /// Keys are replaced [`REFRESH_BEFORE`] their expiry, not at it.
    #[test]
    fn keys_are_replaced_a_minute_before_they_expire() {
        let held = |expires| Held {
            credential: Arc::new(keys(None).credential),
            expires,
        };
        let now = SystemTime::now();
        let expiring = held(Some(now + Duration::from_secs(600)));
        assert!(expiring.fresh(now + Duration::from_secs(539)));
        assert!(!expiring.fresh(now + Duration::from_secs(540)));
        assert!(!expiring.fresh(now + Duration::from_secs(700)));
        assert!(held(None).fresh(now + Duration::from_secs(100 * 365 * 86400)));
        // The end of time: nothing is fresh, nothing panics.
        let last = UNIX_EPOCH + Duration::from_secs(i64::MAX as u64 / 2);
        assert!(!held(Some(now)).fresh(last));
    }

    #[test]
    fn unix_times() {
        assert_eq!(unix_time(0.0), Some(UNIX_EPOCH));
        assert_eq!(
            unix_time(1.5),
            Some(UNIX_EPOCH + Duration::from_millis(1500))
        );
        assert_eq!(
            unix_time(-86400.0),
            Some(UNIX_EPOCH - Duration::from_secs(86400))
        );
        assert_eq!(unix_time(f64::INFINITY), None);
        assert_eq!(unix_time(f64::NEG_INFINITY), Some(UNIX_EPOCH));
        // No time at all: as good as expired (the keys are refused).
        assert_eq!(unix_time(f64::NAN), Some(UNIX_EPOCH));
    }

    #[test]
    fn times_as_messages_show_them() {
        // 1_795_000_000 s: 20775 days (2026-11-18: 20454 days to 2026,
        // then 321) and 40000 s (11:06:40).
        assert_eq!(
            shown(UNIX_EPOCH + Duration::from_secs(1_795_000_000)),
            "2026-11-18T11:06:40+00:00"
        );
        assert_eq!(
            shown(UNIX_EPOCH - Duration::from_secs(86400)),
            "1969-12-31T00:00:00+00:00"
        );
        // Beyond chrono's range: shown as `SystemTime` shows it.
        let far = UNIX_EPOCH + Duration::from_secs(i64::MAX as u64 / 2);
        assert!(shown(far).contains("tv_sec"), "{}", shown(far));
    }

    /// Credentials of `fetch` ("the vault"), and the count of its calls.
    fn counted(
        fetch: impl Fn() -> Result<FetchedKeys, String> + Send + Sync + 'static,
    ) -> (Arc<RefreshingCredentials>, Arc<AtomicUsize>) {
        let calls = Arc::new(AtomicUsize::new(0));
        let counter = calls.clone();
        let provider = RefreshingCredentials::new("the vault", move || {
            counter.fetch_add(1, Ordering::SeqCst);
            fetch()
        });
        (Arc::new(provider), calls)
    }

    /// What 8 requests at once get from `provider`, as text.
    async fn eight_at_once(provider: &Arc<RefreshingCredentials>) -> Vec<Result<String, String>> {
        let asks: Vec<_> = (0..8)
            .map(|_| {
                let provider = provider.clone();
                tokio::spawn(async move { provider.get_credential().await })
            })
            .collect();
        let mut got = vec![];
        for ask in asks {
            got.push(match ask.await.unwrap() {
                Ok(keys) => Ok(keys.key_id.clone()),
                Err(e) => Err(e.to_string()),
            });
        }
        got
    }

    /// One call for requests at once; a call again once the keys are
    /// about to expire; expired keys and failures name the source, and the
    /// next request calls again.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn calls_of_the_function() {
        let (provider, calls) = counted(|| {
            std::thread::sleep(Duration::from_millis(200));
            Ok(keys(None))
        });
        for got in eight_at_once(&provider).await {
            assert_eq!(got.unwrap(), "A");
        }
        assert_eq!(calls.load(Ordering::SeqCst), 1);

        let (provider, calls) =
            counted(|| Ok(keys(Some(SystemTime::now() + Duration::from_secs(30)))));
        provider.get_credential().await.unwrap();
        provider.get_credential().await.unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 2);

        let (expired, _) =
            counted(|| Ok(keys(Some(UNIX_EPOCH + Duration::from_secs(1_577_836_800)))));
        let error = expired.get_credential().await.unwrap_err().to_string();
        assert!(
            error.contains("the vault gave keys that expired at 2020-01-01T00:00:00+00:00"),
            "{error}"
        );
        assert!(!error.contains("s3cr3t"), "{error}");
    }

    /// Keys about to be refreshed but still valid serve the requests that
    /// come while the refresh runs: they do not wait behind it. Keys
    /// within `STILL_VALID_FOR` of expiring do not.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn requests_are_not_held_behind_a_refresh_while_keys_are_valid() {
        // Keys valid 5 s are never fresh: the request that waited calls
        // again too.
        for (valid_for, waits, calls_made) in [(30, false, 2), (5, true, 3)] {
            let (provider, calls) = counted(move || {
                // The first call is quick; a refresh takes a second.
                if CALLED.fetch_add(1, Ordering::SeqCst) % 2 == 1 {
                    std::thread::sleep(Duration::from_secs(1));
                }
                Ok(keys(Some(
                    SystemTime::now() + Duration::from_secs(valid_for),
                )))
            });
            static CALLED: AtomicU64 = AtomicU64::new(0);
            CALLED.store(0, Ordering::SeqCst);
            provider.get_credential().await.unwrap();
            // Within a minute of expiry: the next request refreshes...
            let refreshing = {
                let provider = provider.clone();
                tokio::spawn(async move { provider.get_credential().await })
            };
            tokio::time::sleep(Duration::from_millis(100)).await;
            // ... and one that comes meanwhile uses the valid keys, or
            // waits for the refresh if they are nearly expired.
            let start = std::time::Instant::now();
            provider.get_credential().await.unwrap();
            let waited = start.elapsed() > Duration::from_millis(500);
            assert_eq!(
                waited,
                waits,
                "valid for {valid_for} s: {:?}",
                start.elapsed()
            );
            refreshing.await.unwrap().unwrap();
            assert_eq!(
                calls.load(Ordering::SeqCst),
                calls_made,
                "valid for {valid_for} s"
            );
        }
    }

    /// Requests that waited while a call failed get its error: one call
    /// for all of them; the next request after that calls again.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn a_failed_call_answers_the_requests_that_waited() {
        let (provider, calls) = counted(|| {
            std::thread::sleep(Duration::from_millis(200));
            Err("is locked: see https://user:pw@vault.example/unlock?token=abc".to_string())
        });
        for got in eight_at_once(&provider).await {
            let error = got.unwrap_err();
            assert!(
                error.contains("the vault is locked: see https://"),
                "{error}"
            );
            assert!(
                !error.contains("pw@") && !error.contains("token=abc"),
                "{error}"
            );
        }
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        provider.get_credential().await.unwrap_err();
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }

    /// `kept_at_most` shortens how long keys are kept, never lengthens it.
    #[tokio::test]
    async fn keys_kept_at_most() {
        // Keys that claim a day, kept a second: the request right after
        // uses them.
        let (provider, calls) =
            counted(|| Ok(keys(Some(SystemTime::now() + Duration::from_secs(86400)))));
        let provider = Arc::into_inner(provider)
            .unwrap()
            .kept_at_most(Duration::from_secs(1));
        provider.get_credential().await.unwrap();
        provider.get_credential().await.unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 1, "kept for a second");

        // Keys that expire within the minute, kept at most an hour: asked
        // for again.
        let (provider, calls) =
            counted(|| Ok(keys(Some(SystemTime::now() + Duration::from_secs(30)))));
        let provider = Arc::into_inner(provider)
            .unwrap()
            .kept_at_most(Duration::from_secs(3600));
        provider.get_credential().await.unwrap();
        provider.get_credential().await.unwrap();
        assert_eq!(
            calls.load(Ordering::SeqCst),
            2,
            "expiring within the minute"
        );
    }

    #[test]
    fn errors_on_one_line_without_secrets_and_cut() {
        assert_eq!(
            cleaned("failed:\n  GET https://me:pw@host/x?sig=1 refused"),
            "failed: GET https://***@host/x?*** refused"
        );
        let long = cleaned(&"\u{e9}".repeat(1000));
        assert!(
            long.ends_with("...") && long.len() <= ERROR_SHOWN + 5,
            "{}",
            long.len()
        );
        let shown = format!("{:?}", keys(None));
        assert!(!shown.contains("\"A\""), "{shown}");
        assert!(!shown.contains("s3cr3t"), "{shown}");
    }
}
