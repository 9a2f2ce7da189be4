//! An error and its causes as one line of text, for messages that must say
//! why (zarrs' and object_store's errors often keep the cause out of their
//! own text).

use std::error::Error;

/// `error` and each of its causes, joined by `": "`, leaving out a cause
/// whose text the message already holds (object_store's errors often repeat
/// their source in their own text).
#[must_use]
pub fn error_chain(error: &dyn Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::error_chain;

    #[derive(Debug, thiserror::Error)]
    #[error("outer")]
    struct Outer(#[source] Middle);

    #[derive(Debug, thiserror::Error)]
    #[error("middle repeats: {0}")]
    struct Middle(#[source] std::io::Error);

    #[test]
    fn every_cause_once() {
        let error = Outer(Middle(std::io::Error::other("connection refused")));
        assert_eq!(
            error_chain(&error),
            "outer: middle repeats: connection refused"
        );
    }
}
