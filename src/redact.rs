//! Secrets kept out of every message (for the remote stores; [`redact_url`]
//! is public whatever the features, for any program that prints a location): a URL's user-info and query string
//! (a password, an Azure SAS token, a presigned URL's signature) and the
//! credential values of the S3 settings.
//!
//! [`redact_url`] is the one way a URL is shown; [`Redactor`] cleans text
//! that came from elsewhere (object_store's and reqwest's errors print the
//! URL of the request, query string included; S3's error bodies echo the
//! signed request, in text and in hex).

use std::sync::{Arc, RwLock};

/// `url` with its user-info and its query string (and fragment) replaced by
/// `***`: `https://user:pw@host/a.zarr?sig=x` shows as
/// `https://***@host/a.zarr?***`. Anything without `://` is returned as it
/// is.
#[must_use]
pub fn redact_url(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_string();
    };
    let (scheme, rest) = url.split_at(scheme_end + 3);
    let mut out = String::with_capacity(url.len());
    out.push_str(scheme);
    let rest = match user_info_end(rest) {
        Some(at) => {
            out.push_str("***");
            &rest[at..]
        }
        None => rest,
    };
    match rest.find(['?', '#']) {
        Some(cut) => {
            out.push_str(&rest[..=cut]);
            out.push_str("***");
        }
        None => out.push_str(rest),
    }
    out
}

/// Where the user-info of `rest` (a URL after `://`) ends: at its last
/// `@` before the host. A password is not always percent-encoded as it
/// should be, and a `/`, `?` or `#` in it would end the authority early
/// and show the rest of it: so an `@` after one counts too when what comes
/// before it has a `:` (`user:pa/ss@host`), or when nothing before it
/// ends the authority (`user@host`). A path or query with an `@` and no
/// `:` before it (`host/a@b`) has no user-info.
fn user_info_end(rest: &str) -> Option<usize> {
    let first = rest.find('@')?;
    let before = &rest[..first];
    if !before.contains(':') && before.contains(['/', '?', '#']) {
        return None;
    }
    let host_end = rest[first..]
        .find(['/', '?', '#'])
        .map_or(rest.len(), |i| first + i);
    rest[..host_end].rfind('@')
}

/// Characters that end a URL inside a message (reqwest writes
/// `for url (http://...)`, others quote it).
fn ends_url(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '"' | '\'' | '<' | '>' | '(' | ')' | '[' | ']' | '`' | ','
        )
}

/// `text` with every URL in it (a run of letters, `://`, then up to a
/// space, quote or bracket) shown as [`redact_url`] shows it.
pub(crate) fn redact_urls_in(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        // Past the last character that is not a scheme's (which may take
        // more than one byte: `«http://...`).
        let scheme_start = rest[..at]
            .char_indices()
            .rev()
            .find(|&(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
            .map_or(0, |(i, c)| i + c.len_utf8());
        // An IPv6 host is in brackets, which elsewhere end a URL.
        let host_start = at + 3;
        let mut from = host_start;
        let end = loop {
            match rest[from..].find(ends_url).map(|i| from + i) {
                Some(bracket)
                    if rest[bracket..].starts_with('[')
                        && !rest[host_start..bracket].contains('/') =>
                {
                    match rest[bracket..].find(']') {
                        Some(close) => from = bracket + close + 1,
                        None => break bracket,
                    }
                }
                Some(stop) => break stop,
                None => break rest.len(),
            }
        };
        out.push_str(&rest[..scheme_start]);
        out.push_str(&redact_url(&rest[scheme_start..end]));
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// `text` with the value after every `x-amz-security-token` (any case,
/// then `:`, `=` or an XML tag's `>`) shown as `***`. S3 answers a signature it refuses
/// with the canonical request it computed, headers included, and
/// object_store puts that body in its error: temporary credentials (an
/// instance role, web identity, a container) sign with a session token
/// this crate never sees, so cannot name as a secret.
fn redact_session_tokens(text: &str) -> String {
    // An SSE-C key is a header of every request too.
    let text = redact_header_values(text, "x-amz-server-side-encryption-customer-key");
    redact_header_values(&text, "x-amz-security-token")
}

/// `text` with the value after every `NAME` (any case, then `:`, `=` or an
/// XML tag's `>`) shown as `***`.
fn redact_header_values(text: &str, name: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut done = 0;
    let mut from = 0;
    while let Some(at) = lower[from..].find(name) {
        let name_end = from + at + name.len();
        from = name_end;
        let rest = &text[name_end..];
        let value_start = match rest.trim_start().strip_prefix([':', '=', '>']) {
            Some(after) => {
                let separator_end = rest.len() - after.len();
                name_end + separator_end + (after.len() - after.trim_start().len())
            }
            None => continue,
        };
        let value_end = text[value_start..]
            .find(|c: char| c.is_whitespace() || matches!(c, '&' | '<' | '"' | '\'' | ','))
            .map_or(text.len(), |i| value_start + i);
        if value_end > value_start {
            out.push_str(&text[done..value_start]);
            out.push_str("***");
            done = value_end;
            from = value_end;
        }
    }
    out.push_str(&text[done..]);
    out
}

/// What one store must never print: the secrets of its URL and settings,
/// and the keys its credential providers hand out, as they are fetched.
/// Clones share one list, so a provider that registers a key it fetched
/// hides it from every message of its store from then on.
#[derive(Clone, Default)]
pub(crate) struct Redactor {
    /// Exact strings replaced by `***` wherever they appear (after URLs
    /// are redacted): a query string, a password, credential values, each
    /// in every form a message may show it in ([`forms`]); longest first.
    secrets: Arc<RwLock<Vec<String>>>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redactor({} secrets)", self.read().len())
    }
}

/// The forms a secret may come back in: as given, percent-encoded (a URL's
/// query), in hex (S3's `<CanonicalRequestBytes>` shows the signed request
/// as space-separated hex pairs), and in base64 (an SSE-C key, a header's
/// value).
fn forms(secret: &str) -> Vec<String> {
    let bytes = secret.as_bytes();
    let hex = |upper: bool, separator: &str| {
        bytes
            .iter()
            .map(|b| {
                if upper {
                    format!("{b:02X}")
                } else {
                    format!("{b:02x}")
                }
            })
            .collect::<Vec<_>>()
            .join(separator)
    };
    let percent: String = bytes
        .iter()
        .map(|&b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect();
    vec![
        secret.to_string(),
        percent,
        hex(false, ""),
        hex(true, ""),
        hex(false, " "),
        hex(true, " "),
        base64(bytes),
    ]
}

/// Standard base64 with padding (RFC 4648 4).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for group in bytes.chunks(3) {
        let n = group
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= group.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `text` with the content of every `<CanonicalRequestBytes>` element
/// shown as `***`: S3 answers a refused signature with the canonical
/// request in hex, headers included, so with the session token of whatever
/// signed it (an instance role's, a container's: tokens this crate may
/// never see).
fn redact_canonical_request_bytes(text: &str) -> String {
    const OPEN: &str = "<CanonicalRequestBytes>";
    const CLOSE: &str = "</CanonicalRequestBytes>";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(OPEN) {
        let content = at + OPEN.len();
        out.push_str(&rest[..content]);
        out.push_str("***");
        // Up to the closing tag, or all of it (a body cut short).
        rest = rest[content..]
            .find(CLOSE)
            .map_or("", |end| &rest[content + end..]);
    }
    out.push_str(rest);
    out
}

impl Redactor {
    /// The secrets of `url`: its user-info and query string, and their
    /// parts (a message may show a token decoded, or alone).
    pub(crate) fn for_url(url: &str) -> Self {
        let redactor = Self::default();
        if let Some(scheme_end) = url.find("://") {
            let rest = &url[scheme_end + 3..];
            if let Some(at) = user_info_end(rest) {
                let user_info = &rest[..at];
                redactor.add(user_info);
                if let Some((_, password)) = user_info.split_once(':') {
                    redactor.add(password);
                }
            }
        }
        if let Some(query_start) = url.find(['?', '#']) {
            let query = &url[query_start + 1..];
            redactor.add(query);
            for pair in query.split(['&', '#']) {
                if let Some((_, value)) = pair.split_once('=') {
                    redactor.add(value);
                    redactor.add(&percent_decoded(value));
                }
            }
        }
        redactor
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Vec<String>> {
        // A panic while holding it leaves a list of whole strings.
        self.secrets
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Never print `secret`, in any of its [`forms`] (ignored when shorter
    /// than 4 characters: too short to be a credential, and it would blank
    /// out ordinary words). Every clone of this redactor sees it.
    pub(crate) fn add(&self, secret: &str) {
        if secret.len() < 4 || self.read().iter().any(|s| s == secret) {
            return;
        }
        let mut secrets = self
            .secrets
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for form in forms(secret) {
            if !secrets.contains(&form) {
                secrets.push(form);
            }
        }
        // Longest first, so that a secret containing another goes whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    }

    /// `text` with its URLs redacted, session tokens and the bytes of a
    /// canonical request in it hidden, and every known secret replaced.
    pub(crate) fn text(&self, text: &str) -> String {
        let mut out = redact_canonical_request_bytes(&redact_session_tokens(&redact_urls_in(text)));
        for secret in self.read().iter() {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), "***");
            }
        }
        out
    }
}

/// `%XX` escapes decoded (a token may be printed either way); invalid
/// escapes and non-UTF-8 results are left as they are.
fn percent_decoded(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(hi), Some(lo)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push((hi * 16 + lo) as u8);
            i += 3;
        } else {
            out.push(if bytes[i] == b'+' { b' ' } else { bytes[i] });
            i += 1;
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_info_and_query_are_redacted() {
        assert_eq!(
            redact_url("https://user:pw@host:8443/a/b.zarr?sv=1&sig=abc"),
            "https://***@host:8443/a/b.zarr?***"
        );
        assert_eq!(redact_url("http://host/a.zarr"), "http://host/a.zarr");
        assert_eq!(redact_url("http://host?sig=x"), "http://host?***");
        assert_eq!(redact_url("http://host/a#frag"), "http://host/a#***");
        assert_eq!(redact_url("s3://bucket/p"), "s3://bucket/p");
        assert_eq!(redact_url("not a url"), "not a url");
        assert_eq!(redact_url("https://h/a@v2/b?x=1"), "https://h/a@v2/b?***");
        assert_eq!(redact_url("https://u@h/a"), "https://***@h/a");
        assert_eq!(redact_url("https://u:p@ss@h/a"), "https://***@h/a");
        assert_eq!(redact_url("https://u:p@h/a?e=x@y"), "https://***@h/a?***");
    }

    /// A password that is not percent-encoded, with a character that ends
    /// a URL's authority: the URL parser refuses it, and the error shows
    /// the URL.
    #[test]
    fn passwords_with_slashes_or_question_marks_are_redacted() {
        for (url, password) in [
            ("https://u:pa/ss99@h/a.zarr", "pa/ss99"),
            ("https://u:pa?ss99@h/a.zarr", "pa?ss99"),
            ("https://u:pa#ss99@h/a.zarr", "pa#ss99"),
        ] {
            assert_eq!(redact_url(url), "https://***@h/a.zarr", "{url}");
            let redactor = Redactor::for_url(url);
            let text = redactor.text(&format!("invalid port in u:{password}"));
            assert!(!text.contains("pa"), "{text}");
        }
    }

    #[test]
    fn urls_inside_messages_are_redacted() {
        let text = "error sending request for url (http://u:p@h/a/c/0?sig=S3CRET): refused";
        assert_eq!(
            redact_urls_in(text),
            "error sending request for url (http://***@h/a/c/0?***): refused"
        );
        assert_eq!(
            redact_urls_in("a https://h/x?t=1 and s3://b/k?v=2."),
            "a https://h/x?*** and s3://b/k?***"
        );
    }

    /// An IPv6 host's brackets do not end the URL before its query.
    #[test]
    fn urls_with_ipv6_hosts_inside_messages() {
        assert_eq!(
            redact_urls_in("GET http://[::1]:9/a?sig=x failed (http://u:p@[fe80::1]/b?t=y)"),
            "GET http://[::1]:9/a?*** failed (http://***@[fe80::1]/b?***)"
        );
        assert_eq!(redact_urls_in("bad http://[::1 x"), "bad http://[::1 x");
    }

    /// A message may have any character before a URL (a server's error
    /// body is quoted in it): redaction must not slice inside one.
    #[test]
    fn urls_after_characters_of_several_bytes() {
        assert_eq!(
            redact_urls_in("«https://u:pw@h/a?sig=x» and éhttp://h/b?t=1"),
            "«https://***@h/a?*** and éhttp://h/b?***"
        );
    }

    #[test]
    fn secrets_are_replaced_anywhere_and_decoded() {
        let redactor = Redactor::for_url("https://me:hunter22@h/a.zarr?sv=2024&sig=ab%2Bcd%3D");
        let text = redactor.text("token sig=ab%2Bcd%3D or ab+cd= by me:hunter22, pw hunter22");
        assert!(!text.contains("ab%2Bcd%3D"), "{text}");
        assert!(!text.contains("ab+cd="), "{text}");
        assert!(!text.contains("hunter22"), "{text}");
    }

    /// S3's answer to a refused signature (SignatureDoesNotMatch) shows
    /// the canonical request, with the session token of temporary
    /// credentials among its headers.
    #[test]
    fn session_tokens_in_refusals_are_hidden() {
        let body = "Server returned non-2xx status code: 403 Forbidden: <Error><Code>SignatureDoesNotMatch</Code><CanonicalRequest>GET\n/b/c/0\n\nhost:s3.amazonaws.com\nx-amz-date:20261126T000000Z\nx-amz-security-token:IQoJb3JpZ2luX2VjEXAMPLETOKEN\n\nhost;x-amz-date;x-amz-security-token</CanonicalRequest><X-Amz-Security-Token>ALSO/SECRET+TOKEN=</X-Amz-Security-Token></Error>";
        let text = Redactor::default().text(body);
        assert!(!text.contains("IQoJb3JpZ2luX2VjEXAMPLETOKEN"), "{text}");
        assert!(text.contains("x-amz-security-token:***"), "{text}");
        assert!(
            text.contains("host;x-amz-date;x-amz-security-token<"),
            "{text}"
        );
        assert!(!text.contains("ALSO/SECRET+TOKEN="), "{text}");
        assert!(text.contains("SignatureDoesNotMatch"), "{text}");
        let query =
            Redactor::default().text("signed with X-Amz-Security-Token=AB%2FCD&X-Amz-Date=1");
        assert_eq!(query, "signed with X-Amz-Security-Token=***&X-Amz-Date=1");
    }

    /// S3's `SignatureDoesNotMatch` body shows the canonical request in
    /// hex, space-separated; a secret registered shows in no form, and the
    /// hex is hidden even for a token never registered.
    #[test]
    fn secrets_in_hex_base64_and_percent_encoded_forms() {
        let redactor = Redactor::default();
        redactor.add("To+k/en=");
        // Worked out by hand: 'T' 0x54, 'o' 0x6f, '+' 0x2b, 'k' 0x6b, '/'
        // 0x2f, 'e' 0x65, 'n' 0x6e, '=' 0x3d; base64 of the 8 bytes is
        // "VG8ray9lbj0=" (RFC 4648's alphabet).
        for form in [
            "546f2b6b2f656e3d",
            "546F2B6B2F656E3D",
            "54 6f 2b 6b 2f 65 6e 3d",
            "VG8ray9lbj0=",
            "To%2Bk%2Fen%3D",
            "To+k/en=",
        ] {
            let text = redactor.text(&format!("saw <x>{form}</x>"));
            assert_eq!(text, "saw <x>***</x>", "{form}");
        }
        let body = "<Error><Code>SignatureDoesNotMatch</Code><CanonicalRequestBytes>47 45 54 0a 78 2d 61 6d 7a</CanonicalRequestBytes><RequestId>1</RequestId></Error>";
        assert_eq!(
            Redactor::default().text(body),
            "<Error><Code>SignatureDoesNotMatch</Code><CanonicalRequestBytes>***</CanonicalRequestBytes><RequestId>1</RequestId></Error>"
        );
        // Cut short (error bodies are cut at 8 KiB): hidden to the end.
        assert_eq!(
            Redactor::default().text("<CanonicalRequestBytes>47 45 54"),
            "<CanonicalRequestBytes>***"
        );
        assert_eq!(
            Redactor::default()
                .text("x-amz-server-side-encryption-customer-key:c2VjcmV0a2V5MTIz\nhost:h"),
            "x-amz-server-side-encryption-customer-key:***\nhost:h"
        );
    }

    /// A key registered through one clone is hidden by every clone.
    #[test]
    fn clones_share_what_is_registered() {
        let store = Redactor::default();
        let provider = store.clone();
        provider.add("fetched-later-token");
        assert_eq!(store.text("token fetched-later-token"), "token ***");
    }

    #[test]
    fn short_values_are_not_secrets() {
        let redactor = Redactor::for_url("http://h/a?x=1");
        assert_eq!(redactor.text("1 of 1"), "1 of 1");
    }
}
