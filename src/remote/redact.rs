//! Secrets kept out of every message: a URL's user-info and query string
//! (a password, an Azure SAS token, a presigned URL's signature) and the
//! credential values of the S3 settings.
//!
//! [`redact_url`] is the one way a URL is shown; [`Redactor`] cleans text
//! that came from elsewhere (object_store's and reqwest's errors print the
//! URL of the request, query string included).

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
    const NAME: &str = "x-amz-security-token";
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut done = 0;
    let mut from = 0;
    while let Some(at) = lower[from..].find(NAME) {
        let name_end = from + at + NAME.len();
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

/// What one store must never print: the secrets of its URL and settings.
#[derive(Clone, Default)]
pub(crate) struct Redactor {
    /// Exact strings replaced by `***` wherever they appear (after URLs
    /// are redacted): a query string, a password, credential values.
    secrets: Vec<String>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redactor({} secrets)", self.secrets.len())
    }
}

impl Redactor {
    /// The secrets of `url`: its user-info and query string, and their
    /// parts (a message may show a token decoded, or alone).
    pub(crate) fn for_url(url: &str) -> Self {
        let mut redactor = Self::default();
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

    /// Never print `secret` (ignored when shorter than 4 characters: too
    /// short to be a credential, and it would blank out ordinary words).
    pub(crate) fn add(&mut self, secret: &str) {
        if secret.len() >= 4 && !self.secrets.iter().any(|s| s == secret) {
            self.secrets.push(secret.to_string());
            // Longest first, so that a secret containing another goes whole.
            self.secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        }
    }

    /// `text` with its URLs redacted, session tokens in it hidden, and
    /// every known secret replaced.
    pub(crate) fn text(&self, text: &str) -> String {
        let mut out = redact_session_tokens(&redact_urls_in(text));
        for secret in &self.secrets {
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

    #[test]
    fn short_values_are_not_secrets() {
        let redactor = Redactor::for_url("http://h/a?x=1");
        assert_eq!(redactor.text("1 of 1"), "1 of 1");
    }
}
