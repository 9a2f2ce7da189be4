//! Where the requests of an `s3://` store get their signature, found the
//! way the AWS command line tools find it.
//!
//! Credentials given in code ([`RemoteOptions::credentials`]) sign every
//! request. Otherwise an explicit choice wins, first to last:
//! [`RemoteOptions::anonymous`],
//! `aws_skip_signature` in [`RemoteOptions::s3_config`], the
//! `AWS_SKIP_SIGNATURE` variable. `true` sends requests unsigned; `false`
//! signs them with the first credentials of the chain below: with none
//! before the instance metadata service, that service is asked at every
//! request (with object_store's timeouts and retries; open cannot know
//! whether it will answer), and with it disabled too, open fails. With no
//! explicit choice, the chain decides, and
//! a store with no credentials anywhere sends requests unsigned (a public
//! bucket reads with default options):
//!
//! 1. an access key in `s3_config` or the environment (`AWS_ACCESS_KEY_ID`,
//!    `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`);
//! 2. web identity from the environment (`AWS_WEB_IDENTITY_TOKEN_FILE` and
//!    `AWS_ROLE_ARN`), which botocore takes before the shared files;
//! 3. the profile `AWS_PROFILE` (else `AWS_DEFAULT_PROFILE`, else
//!    `default`) of the shared credentials file
//!    (`AWS_SHARED_CREDENTIALS_FILE`, else `~/.aws/credentials`) and config
//!    file (`AWS_CONFIG_FILE`, else `~/.aws/config`): its static keys (as
//!    one credential: a session token of the environment is not attached
//!    to them) or its `credential_process`; not read at all with
//!    [`RemoteOptions::read_profiles`] off;
//! 4. container credentials: `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI`
//!    (object_store's provider), or `..._FULL_URI` (the crate's own,
//!    [`container`](super::container): plain HTTP only to loopback and the
//!    container agents, checked at open; the token from
//!    `AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE` or
//!    `AWS_CONTAINER_AUTHORIZATION_TOKEN`);
//! 5. the instance metadata service (an EC2 instance role), unless
//!    `AWS_EC2_METADATA_DISABLED=true`; its address is object_store's
//!    `aws_metadata_endpoint` setting (`AWS_METADATA_ENDPOINT`). With no
//!    explicit choice it is asked once, at the first request, for at most
//!    [`INSTANCE_PROBE`]: credentials sign, no answer sends unsigned, so
//!    a laptop does not wait on timeouts.
//!
//! The profile's `region` and `endpoint_url` apply where the options and
//! the environment set none, whichever step gave the keys (keys meant for
//! one endpoint never sign requests to AWS).
//!
//! Steps 1, 2, 4 and 5 are object_store's own providers. Profiles are read
//! here, in the AWS CLI's order: static keys of the credentials file, then
//! the profile's `credential_process` (run as
//! [`credential_process`](super::credential_process) says), then static
//! keys of the config file. A profile that gets its credentials from SSO
//! (`sso_session`, `sso_start_url`), an assumed role (`role_arn` with
//! `source_profile` or `credential_source`) or its own
//! `web_identity_token_file` is not read: named or the default, such a
//! profile is an error at open that says what to do instead (a profile
//! whose `credential_process` is `aws configure export-credentials
//! --profile NAME --format process`, the keys exported, or unsigned
//! requests for a public bucket), since the AWS CLI would sign as that
//! identity and requests signed otherwise would fail with a 403 that hides
//! why.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures::stream::{BoxStream, StreamExt};
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey, AwsCredentialProvider};
use object_store::path::Path as ObjectPath;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult, Result,
};

use super::RemoteOptions;
use super::credential_process::{describe, process_credentials};
use crate::redact::Redactor;

/// How long the instance metadata service is given, at a store's first
/// request, to hand out credentials before requests go unsigned.
pub const INSTANCE_PROBE: Duration = Duration::from_secs(1);

/// What a profile may hold that this crate does not read.
const UNREAD_PROFILE_KEYS: [&str; 7] = [
    "sso_session",
    "sso_start_url",
    "sso_account_id",
    "role_arn",
    "source_profile",
    "credential_source",
    "web_identity_token_file",
];

/// How the requests of a store are signed: said by a 401/403 error.
#[derive(Debug)]
pub(crate) enum Signing {
    /// Decided at open; the sentence says how and what to change.
    Known(String),
    /// Decided at the first request by asking the instance metadata
    /// service; `searched` lists what was looked at before.
    AtFirstRequest {
        chosen: Arc<tokio::sync::OnceCell<bool>>,
        searched: String,
    },
}

impl Signing {
    /// The sentence a 401/403 error ends with.
    pub(crate) fn describe(&self) -> String {
        match self {
            Self::Known(sentence) => sentence.clone(),
            Self::AtFirstRequest { chosen, searched } => match chosen.get() {
                Some(true) => signed_sentence("the instance metadata service (an instance role)"),
                Some(false) => unsigned_found_nothing(&format!(
                    "{searched}; the instance metadata service gave none within {} ms",
                    INSTANCE_PROBE.as_millis()
                )),
                None => "no request has been sent yet".to_string(),
            },
        }
    }
}

fn signed_sentence(from: &str) -> String {
    format!(
        "the request was signed with credentials from {from}, which were refused or may not read this object: correct them there, or, if the bucket is public, set RemoteOptions::anonymous = Some(true) to send requests unsigned"
    )
}

fn unsigned_found_nothing(searched: &str) -> String {
    format!(
        "the request was unsigned, as no credentials were found ({searched}): for a private bucket set AWS_PROFILE (a profile with aws_access_key_id and aws_secret_access_key) or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
    )
}

/// `provider`, whose keys are registered with `redactor` as they are
/// fetched: a session token from a Python provider or a
/// `credential_process` is never shown by the store's messages, in any
/// form (S3 echoes it back in its refusals).
fn registering(provider: AwsCredentialProvider, redactor: &Redactor) -> AwsCredentialProvider {
    Arc::new(Registering {
        inner: provider,
        redactor: redactor.clone(),
    })
}

#[derive(Debug)]
struct Registering {
    inner: AwsCredentialProvider,
    redactor: Redactor,
}

#[async_trait::async_trait]
impl object_store::CredentialProvider for Registering {
    type Credential = object_store::aws::AwsCredential;

    async fn get_credential(&self) -> Result<Arc<Self::Credential>> {
        let credential = self.inner.get_credential().await?;
        self.redactor.add(&credential.secret_key);
        if let Some(token) = &credential.token {
            self.redactor.add(token);
        }
        Ok(credential)
    }
}

/// What the builder of an `s3://` store becomes.
pub(crate) enum Decided {
    /// One store, signed or not as the builder now says.
    Builder(Box<AmazonS3Builder>, Signing),
    /// Signed through the instance metadata service if it answers at the
    /// first request, else unsigned; the choice goes in the cell, which
    /// the [`Signing`] reads.
    InstanceOrUnsigned(
        Box<AmazonS3Builder>,
        Arc<tokio::sync::OnceCell<bool>>,
        Signing,
    ),
}

/// Whether `builder` has `key` set (from the environment or the options).
fn has(builder: &AmazonS3Builder, key: AmazonS3ConfigKey) -> bool {
    builder.get_config_value(&key).is_some()
}

/// The environment variable `name`, if set and valid UTF-8.
fn env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// `true` / `false` as object_store parses a boolean setting.
pub(super) fn parse_bool(value: &str) -> Option<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" | "y" => Some(true),
        "false" | "0" | "no" | "off" | "n" => Some(false),
        _ => None,
    }
}

/// The explicit choice to sign (`Some(false)`) or not (`Some(true)`), and
/// the setting that made it, as a user would change it.
fn explicit_choice(options: &RemoteOptions) -> Result<Option<(bool, String)>, String> {
    if let Some(anonymous) = options.anonymous {
        return Ok(Some((
            anonymous,
            format!("RemoteOptions::anonymous is Some({anonymous})"),
        )));
    }
    let in_config = options.s3_config.iter().rev().find(|(name, _)| {
        matches!(
            name.to_ascii_lowercase().as_str(),
            "aws_skip_signature" | "skip_signature"
        )
    });
    if let Some((name, value)) = in_config {
        let skip = parse_bool(value).ok_or_else(|| {
            format!("{name} = {value:?} in RemoteOptions::s3_config is not true or false")
        })?;
        return Ok(Some((
            skip,
            format!("{name}={value} in RemoteOptions::s3_config"),
        )));
    }
    if let Some(value) = env("AWS_SKIP_SIGNATURE") {
        let skip = parse_bool(&value)
            .ok_or_else(|| format!("AWS_SKIP_SIGNATURE={value:?} is not true or false"))?;
        return Ok(Some((
            skip,
            format!("AWS_SKIP_SIGNATURE={value} in the environment"),
        )));
    }
    Ok(None)
}

/// Decide how the store of `builder` signs (see the module doc), setting
/// the builder's skip-signature flag and any keys read from a profile.
///
/// # Errors
/// A sentence, for a configuration error: a malformed choice, a profile
/// named by `AWS_PROFILE` that cannot be read, or signing asked for with
/// no credentials anywhere.
pub(crate) fn decide(
    mut builder: AmazonS3Builder,
    options: &RemoteOptions,
    redactor: &Redactor,
) -> Result<Decided, String> {
    let explicit = explicit_choice(options)?;
    // The profile's region and endpoint apply where the options and the
    // environment set none, whatever signs (or does not), as in the AWS
    // CLI: keys meant for one endpoint never sign requests to another, and
    // an unsigned read of a bucket in another region is not sent to
    // us-east-1.
    if options.read_profiles {
        builder = profile_settings()?.apply(builder);
    }
    // 0. A provider given in code.
    if let Some(provider) = &options.credentials {
        if let Some((true, because)) = &explicit {
            return Err(format!(
                "RemoteOptions::credentials is given, but requests are to be unsigned because {because}: remove one of the two"
            ));
        }
        let builder = builder
            .with_skip_signature(false)
            .with_credentials(registering(provider.clone(), redactor));
        return Ok(Decided::Builder(
            Box::new(builder),
            Signing::Known(signed_sentence(
                "RemoteOptions::credentials (from Python: the S3Store's credential_provider)",
            )),
        ));
    }
    if let Some((true, because)) = &explicit {
        let builder = builder.with_skip_signature(true);
        let fix = if because.starts_with("RemoteOptions::anonymous") {
            "set RemoteOptions::anonymous to None".to_string()
        } else if because.contains("s3_config") {
            "remove aws_skip_signature from RemoteOptions::s3_config".to_string()
        } else {
            "unset AWS_SKIP_SIGNATURE".to_string()
        };
        return Ok(Decided::Builder(
            Box::new(builder),
            Signing::Known(format!(
                "the request was unsigned, because {because}: to sign it with credentials, {fix}"
            )),
        ));
    }
    let required = explicit.is_some();
    builder = builder.with_skip_signature(false);

    // 1. An access key.
    if has(&builder, AmazonS3ConfigKey::AccessKeyId) {
        let in_options = options
            .s3_config
            .iter()
            .any(|(name, _)| name.to_ascii_lowercase().contains("access_key_id"));
        let from = if in_options {
            "RemoteOptions::s3_config (aws_access_key_id, aws_secret_access_key)"
        } else {
            "the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)"
        };
        return Ok(Decided::Builder(
            Box::new(builder),
            Signing::Known(signed_sentence(from)),
        ));
    }
    let mut searched = vec!["no AWS_ACCESS_KEY_ID".to_string()];

    // 2. Web identity from the environment (botocore looks at it before
    // the shared files).
    if has(&builder, AmazonS3ConfigKey::WebIdentityTokenFile)
        && has(&builder, AmazonS3ConfigKey::RoleArn)
    {
        let from = "web identity (AWS_WEB_IDENTITY_TOKEN_FILE, AWS_ROLE_ARN)";
        return Ok(Decided::Builder(
            Box::new(builder),
            Signing::Known(signed_sentence(from)),
        ));
    }
    searched.push("no web identity".to_string());

    // 3. A profile, unless the store stands for one that never reads them
    // (an obstore store mapped from Python).
    let profile = if options.read_profiles {
        read_profile()?
    } else {
        ProfileFound::Nothing("profile files not read (RemoteOptions::read_profiles)".to_string())
    };
    match profile {
        ProfileFound::Keys { name, file, keys } => {
            // As one credential: an `AWS_SESSION_TOKEN` of the
            // environment (another identity's) is not attached to them.
            redactor.add(&keys.1);
            if let Some(token) = &keys.2 {
                redactor.add(token);
            }
            let credential = object_store::aws::AwsCredential {
                key_id: keys.0,
                secret_key: keys.1,
                token: keys.2,
            };
            builder = builder.with_credentials(Arc::new(
                object_store::StaticCredentialProvider::new(credential),
            ));
            let from = describe(&name, &file);
            return Ok(Decided::Builder(
                Box::new(builder),
                Signing::Known(signed_sentence(&from)),
            ));
        }
        ProfileFound::Process {
            name,
            file,
            command,
        } => {
            let from = format!("the credential_process of {}", describe(&name, &file));
            let process = process_credentials(&name, &file, command);
            let builder = builder.with_credentials(registering(Arc::new(process), redactor));
            return Ok(Decided::Builder(
                Box::new(builder),
                Signing::Known(signed_sentence(&from)),
            ));
        }
        ProfileFound::Nothing(why) => searched.push(why),
    }

    // 4. Container credentials: at a full URI, the crate's own provider
    // (object_store's sends the token anywhere, and without a token file
    // falls back to the instance metadata service unsaid); at a relative
    // one, object_store's (always 169.254.170.2).
    if let Some(uri) = builder.get_config_value(&AmazonS3ConfigKey::ContainerCredentialsFullUri)
        && !has(&builder, AmazonS3ConfigKey::ContainerCredentialsRelativeUri)
    {
        let url = super::container::checked_uri(&uri)?;
        let token = match (
            builder.get_config_value(&AmazonS3ConfigKey::ContainerAuthorizationTokenFile),
            env("AWS_CONTAINER_AUTHORIZATION_TOKEN"),
        ) {
            (Some(file), _) => super::container::Token::File(file.into()),
            (None, Some(value)) => {
                redactor.add(value.trim());
                super::container::Token::Value(value)
            }
            (None, None) => super::container::Token::None,
        };
        let provider = super::container::container_credentials(url.clone(), token);
        let from = format!(
            "container credentials (AWS_CONTAINER_CREDENTIALS_FULL_URI={})",
            super::redact_url(url.as_str())
        );
        let builder = builder.with_credentials(registering(Arc::new(provider), redactor));
        return Ok(Decided::Builder(
            Box::new(builder),
            Signing::Known(signed_sentence(&from)),
        ));
    }
    if has(&builder, AmazonS3ConfigKey::ContainerCredentialsRelativeUri) {
        let from = "container credentials (AWS_CONTAINER_CREDENTIALS_RELATIVE_URI)";
        return Ok(Decided::Builder(
            Box::new(builder),
            Signing::Known(signed_sentence(from)),
        ));
    }
    searched.push("no container credentials".to_string());

    // 5. The instance metadata service.
    let metadata_disabled =
        env("AWS_EC2_METADATA_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
    if metadata_disabled {
        searched.push("instance metadata disabled by AWS_EC2_METADATA_DISABLED".to_string());
        let searched = searched.join(", ");
        if let Some((_, because)) = explicit {
            return Err(format!(
                "requests are to be signed ({because}), but no credentials were found ({searched})"
            ));
        }
        return Ok(Decided::Builder(
            Box::new(builder.with_skip_signature(true)),
            Signing::Known(unsigned_found_nothing(&searched)),
        ));
    }
    if required {
        let from = "the instance metadata service (an instance role), the last place looked";
        return Ok(Decided::Builder(
            Box::new(builder),
            Signing::Known(signed_sentence(from)),
        ));
    }
    let chosen = Arc::<tokio::sync::OnceCell<bool>>::default();
    Ok(Decided::InstanceOrUnsigned(
        Box::new(builder),
        chosen.clone(),
        Signing::AtFirstRequest {
            chosen,
            searched: searched.join(", "),
        },
    ))
}

/// What the profile chain gave.
enum ProfileFound {
    /// Static keys `(id, secret, token)` of profile `name`, from `file`.
    Keys {
        name: String,
        file: PathBuf,
        keys: (String, String, Option<String>),
    },
    /// The `credential_process` command of profile `name`, from `file`.
    Process {
        name: String,
        file: PathBuf,
        command: String,
    },
    /// No keys; why, for the 401/403 message.
    Nothing(String),
}

/// What a profile's config section says besides credentials.
#[derive(Clone, Default)]
struct ProfileSettings {
    region: Option<String>,
    endpoint: Option<String>,
}

impl ProfileSettings {
    /// `builder` with the profile's region and endpoint where neither the
    /// options nor the environment set them.
    fn apply(self, mut builder: AmazonS3Builder) -> AmazonS3Builder {
        if let Some(region) = self.region
            && !has(&builder, AmazonS3ConfigKey::Region)
        {
            builder = builder.with_region(region);
        }
        if let Some(endpoint) = self.endpoint
            && !has(&builder, AmazonS3ConfigKey::Endpoint)
        {
            if endpoint.starts_with("http://") {
                builder = builder.with_allow_http(true);
            }
            builder = builder.with_endpoint(endpoint);
        }
        builder
    }
}

/// The user's home directory.
fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .or_else(|| std::env::var_os("USERPROFILE"))
        .map(PathBuf::from)
}

/// `AWS_VARIABLE` (a leading `~/` is the home directory, as the AWS CLI
/// reads it), else `~/.aws/NAME`.
fn shared_file(variable: &str, name: &str) -> Option<PathBuf> {
    match env(variable) {
        Some(path) => match path.strip_prefix("~/") {
            Some(rest) => home().map(|h| h.join(rest)),
            None => Some(PathBuf::from(path)),
        },
        None => home().map(|h| h.join(".aws").join(name)),
    }
}

/// The credentials of the profile `AWS_PROFILE` (else `default`): its
/// static keys or its `credential_process`.
fn read_profile() -> Result<ProfileFound, String> {
    let (named, name, credentials_file, config_file) = profile_name_and_files();
    read_named_profile(named, name, credentials_file, config_file)
}

/// The profile the AWS CLI reads: `AWS_PROFILE`, else
/// `AWS_DEFAULT_PROFILE` (the older name botocore still reads), else
/// `default`; as `(variable=value if named, name, credentials file, config
/// file)`.
fn profile_name_and_files() -> (Option<String>, String, Option<PathBuf>, Option<PathBuf>) {
    let named = ["AWS_PROFILE", "AWS_DEFAULT_PROFILE"]
        .iter()
        .find_map(|variable| {
            env(variable)
                .filter(|p| !p.is_empty())
                .map(|p| (variable, p))
        });
    let name = named
        .as_ref()
        .map_or_else(|| "default".to_string(), |(_, p)| p.clone());
    let named = named.map(|(variable, p)| format!("{variable}={p}"));
    (
        named,
        name,
        shared_file("AWS_SHARED_CREDENTIALS_FILE", "credentials"),
        shared_file("AWS_CONFIG_FILE", "config"),
    )
}

/// The region and endpoint of the profile the AWS CLI reads (nothing if
/// there is no such profile), whatever gives the keys.
fn profile_settings() -> Result<ProfileSettings, String> {
    let (_, name, _, config_file) = profile_name_and_files();
    let Some(file) = config_file else {
        return Ok(ProfileSettings::default());
    };
    let text = match std::fs::read_to_string(&file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(ProfileSettings::default());
        }
        Err(e) => return Err(format!("cannot read {}: {e}", file.display())),
    };
    let section = config_section(&text, &name);
    Ok(ProfileSettings {
        region: section.as_ref().and_then(|s| s.get("region").cloned()),
        endpoint: section.and_then(|s| s.get("endpoint_url").cloned()),
    })
}

/// The section of profile `name` in a config file's `text`.
fn config_section(text: &str, name: &str) -> Option<HashMap<String, String>> {
    if name == "default" {
        ini_section(text, "default").or_else(|| ini_section(text, "profile default"))
    } else {
        ini_section(text, &format!("profile {name}"))
    }
}

/// [`read_profile`] of profile `name` (`named` says by which variable, if
/// not the default).
fn read_named_profile(
    named: Option<String>,
    name: String,
    credentials_file: Option<PathBuf>,
    config_file: Option<PathBuf>,
) -> Result<ProfileFound, String> {
    let read = |file: &Option<PathBuf>| -> Result<Option<String>, String> {
        let Some(file) = file else { return Ok(None) };
        match std::fs::read_to_string(file) {
            Ok(text) => Ok(Some(text)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("cannot read {}: {e}", file.display())),
        }
    };
    let from_credentials = read(&credentials_file)?
        .and_then(|text| ini_section(&text, &name))
        .map(|s| (s, credentials_file.clone().unwrap_or_default()));
    let from_config = read(&config_file)?
        .and_then(|text| config_section(&text, &name))
        .map(|s| (s, config_file.clone().unwrap_or_default()));
    let looked_in = [&credentials_file, &config_file]
        .iter()
        .filter_map(|f| f.as_ref().map(|f| f.display().to_string()))
        .collect::<Vec<_>>()
        .join(" or ");
    if from_credentials.is_none() && from_config.is_none() {
        let files = looked_in;
        return match named {
            Some(named) => Err(format!(
                "{named}, but there is no profile '{name}' in {files}"
            )),
            None => Ok(ProfileFound::Nothing(format!(
                "no profile 'default' in {files}"
            ))),
        };
    }
    // The files that have the profile.
    let files = from_credentials
        .iter()
        .chain(from_config.iter())
        .map(|(_, file)| file.display().to_string())
        .collect::<Vec<_>>()
        .join(" and ");
    // A profile that is not read is an error when named, passed over as
    // the default.
    let not_read = |why: String| match &named {
        Some(named) => Err(format!("{named}: {why}")),
        None => Ok(ProfileFound::Nothing(why)),
    };
    let unread: Vec<&str> = UNREAD_PROFILE_KEYS
        .iter()
        .copied()
        .filter(|key| {
            from_credentials
                .iter()
                .chain(from_config.iter())
                .any(|(s, _)| s.contains_key(*key))
        })
        .collect();
    // The AWS CLI takes an assumed role, SSO and web identity before keys
    // and processes: the identity such a profile signs as is not one this
    // crate can get (`source_profile` alone decides nothing).
    // Named or the default, it is an error at open: the AWS CLI would sign
    // as that identity, and unsigned requests (or another identity's)
    // would fail later with a 403 that hides why.
    if unread.iter().any(|key| *key != "source_profile") {
        let who = named
            .clone()
            .unwrap_or_else(|| "the default profile".to_string());
        return Err(format!(
            "{who}: {}",
            format!(
                "profile '{name}' in {files} gets its credentials through {}, which this crate does not read (it reads static keys and credential_process): use a profile with `credential_process = aws configure export-credentials --profile {name} --format process`, or export the keys (`aws configure export-credentials --profile {name} --format env`)",
                unread.join(", ")
            ) + "; for a public bucket, set RemoteOptions::anonymous = Some(true) or AWS_SKIP_SIGNATURE=true"
        ));
    }
    // The static keys of one file's section of the profile.
    let keys_in = |found: &Option<(HashMap<String, String>, PathBuf)>| {
        let (section, file) = found.as_ref()?;
        let id = section.get("aws_access_key_id")?;
        let secret = section.get("aws_secret_access_key")?;
        let token = section.get("aws_session_token").cloned();
        Some(ProfileFound::Keys {
            name: name.clone(),
            file: file.clone(),
            keys: (id.clone(), secret.clone(), token),
        })
    };
    // The AWS CLI's order: the credentials file's keys, the profile's
    // process (the credentials file's setting over the config file's),
    // the config file's keys.
    if let Some(found) = keys_in(&from_credentials) {
        return Ok(found);
    }
    let process = from_credentials
        .iter()
        .chain(from_config.iter())
        .find_map(|(section, file)| {
            let command = section.get("credential_process")?;
            Some((command.clone(), file.clone()))
        });
    if let Some((command, file)) = process {
        if command.trim().is_empty() {
            return not_read(format!(
                "{} has an empty credential_process",
                describe(&name, &file)
            ));
        }
        return Ok(ProfileFound::Process {
            name: name.clone(),
            file,
            command,
        });
    }
    if let Some(found) = keys_in(&from_config) {
        return Ok(found);
    }
    not_read(format!(
        "profile '{name}' in {files} has no aws_access_key_id and aws_secret_access_key, and no credential_process"
    ))
}

/// The `key = value` settings of section `[section]` of an AWS shared
/// config or credentials file (INI: `#` and `;` comment lines; keys
/// lowercased; a key with an empty value opens indented sub-settings,
/// which are skipped). `None` if there is no such section.
fn ini_section(text: &str, section: &str) -> Option<HashMap<String, String>> {
    let wanted: Vec<&str> = section.split_whitespace().collect();
    let mut found: Option<HashMap<String, String>> = None;
    let mut inside = false;
    let mut nested = false;
    for raw in text.lines() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(header) = line.strip_prefix('[') {
            let header = header.split(']').next().unwrap_or(header);
            inside = header.split_whitespace().collect::<Vec<_>>() == wanted;
            if inside && found.is_none() {
                found = Some(HashMap::new());
            }
            nested = false;
            continue;
        }
        if !inside {
            continue;
        }
        if nested && raw.starts_with([' ', '\t']) {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let (key, value) = (key.trim().to_ascii_lowercase(), value.trim());
        nested = value.is_empty();
        if let Some(settings) = found.as_mut() {
            settings.insert(key, value.to_string());
        }
    }
    found
}

/// An S3 store signed with instance credentials if the instance metadata
/// service gives them within [`INSTANCE_PROBE`] of the first request, else
/// unsigned; decided once, for all requests.
#[derive(Debug, Clone)]
pub(crate) struct InstanceOrUnsigned {
    signed: Arc<dyn ObjectStore>,
    unsigned: Arc<dyn ObjectStore>,
    credentials: AwsCredentialProvider,
    chosen: Arc<tokio::sync::OnceCell<bool>>,
}

impl InstanceOrUnsigned {
    pub(crate) fn new(
        signed: object_store::aws::AmazonS3,
        unsigned: Arc<dyn ObjectStore>,
        chosen: Arc<tokio::sync::OnceCell<bool>>,
    ) -> Self {
        Self {
            credentials: signed.credentials().clone(),
            signed: Arc::new(signed),
            unsigned,
            chosen,
        }
    }

    async fn store(&self) -> Arc<dyn ObjectStore> {
        let signed = *self
            .chosen
            .get_or_init(|| async {
                let probe = tokio::time::timeout(INSTANCE_PROBE, self.credentials.get_credential());
                matches!(probe.await, Ok(Ok(_)))
            })
            .await;
        if signed {
            self.signed.clone()
        } else {
            self.unsigned.clone()
        }
    }
}

impl std::fmt::Display for InstanceOrUnsigned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "S3 (signed if the instance has a role)")
    }
}

#[async_trait::async_trait]
impl ObjectStore for InstanceOrUnsigned {
    async fn put_opts(
        &self,
        location: &ObjectPath,
        payload: PutPayload,
        opts: PutOptions,
    ) -> Result<PutResult> {
        self.store().await.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &ObjectPath,
        opts: PutMultipartOptions,
    ) -> Result<Box<dyn MultipartUpload>> {
        self.store().await.put_multipart_opts(location, opts).await
    }

    async fn get_opts(&self, location: &ObjectPath, options: GetOptions) -> Result<GetResult> {
        self.store().await.get_opts(location, options).await
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, Result<ObjectPath>>,
    ) -> BoxStream<'static, Result<ObjectPath>> {
        let this = self.clone();
        futures::stream::once(async move { this.store().await.delete_stream(locations) })
            .flatten()
            .boxed()
    }

    fn list(&self, prefix: Option<&ObjectPath>) -> BoxStream<'static, Result<ObjectMeta>> {
        let this = self.clone();
        let prefix = prefix.cloned();
        futures::stream::once(async move { this.store().await.list(prefix.as_ref()) })
            .flatten()
            .boxed()
    }

    async fn list_with_delimiter(&self, prefix: Option<&ObjectPath>) -> Result<ListResult> {
        self.store().await.list_with_delimiter(prefix).await
    }

    async fn copy_opts(
        &self,
        from: &ObjectPath,
        to: &ObjectPath,
        options: CopyOptions,
    ) -> Result<()> {
        self.store().await.copy_opts(from, to, options).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_of_shared_files() {
        let text = "\
# comment
[default]
aws_access_key_id = AKIDDEFAULT
aws_secret_access_key=secret1

[profile  reader]
region = eu-west-1
s3 =
  max_concurrent_requests = 20
  region = nested-ignored
aws_access_key_id = AKIDREADER
; another comment
[reader]
aws_access_key_id = WRONG-SECTION
";
        let default = ini_section(text, "default").unwrap();
        assert_eq!(default["aws_access_key_id"], "AKIDDEFAULT");
        assert_eq!(default["aws_secret_access_key"], "secret1");
        let reader = ini_section(text, "profile reader").unwrap();
        assert_eq!(reader["region"], "eu-west-1");
        assert_eq!(reader["aws_access_key_id"], "AKIDREADER");
        assert!(!reader.contains_key("max_concurrent_requests"));
        assert_eq!(
            ini_section(text, "reader").unwrap()["aws_access_key_id"],
            "WRONG-SECTION"
        );
        assert!(ini_section(text, "missing").is_none());
    }

    #[test]
    fn booleans() {
        assert_eq!(parse_bool(" TRUE "), Some(true));
        assert_eq!(parse_bool("0"), Some(false));
        assert_eq!(parse_bool("maybe"), None);
    }
}
