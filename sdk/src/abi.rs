//! The ABI-stable face of the handler interface, for compiled handler modules (feature `abi`).
//!
//! A compiled handler module is a `cdylib` that wraps one [`Handler`] and exports it with
//! [`export_handler!`](crate::export_handler). The host (built with its `dynamic-handlers`
//! feature) loads the library with abi_stable's loader, which checks the layout of every type
//! below and the interface version before anything is called, then checks the declared handler
//! name against the closed [`HandlerName`] set and the declared SDK version with
//! [`is_compatible`](crate::is_compatible).
//!
//! Three parts, after abi_stable's interface / implementation / user split:
//!
//! - the interface: the FFI-safe data types (`Ffi*`), the traits [`FfiHandler`],
//!   [`FfiEffects`] and [`FfiLock`] (each generating an `…_TO` trait object), and the root
//!   module [`HandlerModule`];
//! - the module side: [`handler_to_ffi`] lifts any [`Handler`] into an [`FfiHandler`], whose
//!   `run` hands the wrapped handler a [`Effects`] that forwards every call to the host;
//! - the host side: [`LoadedHandler`] turns a loaded [`FfiHandler`] back into a [`Handler`],
//!   and gives the module an [`FfiEffects`] that forwards to the host's own [`Effects`], so every
//!   process, request, read and lock of a module is still bounded and checked by the host, in
//!   one place.
//!
//! The plan crosses the boundary as JSON (the [`LanePlan`] wire form), everything else as
//! `#[repr(C)]` types. Paths cross as UTF-8 strings; a path that is not valid UTF-8 is refused
//! rather than passed lossily. A panic inside a module's handler is caught on the module side
//! and comes back as a [`HandlerError`].
//!
//! The interface only grows by appending: new trait methods and root-module fields go below the
//! ones marked `#[sabi(last_prefix_field)]`, and each says what a module built without it gets
//! (an `Option`, a default), never a panic: the loader refuses what it cannot use.

// The sabi_trait / StableAbi derives expand to `unsafe` blocks (vtables, layout constants);
// this module writes none by hand (SAFETY: the layouts those blocks rely on are checked by
// abi_stable's loader against the host's before any module code is called).
#![allow(unsafe_code)]
// sabi_trait puts its interface impls inside a generated const (abi_stable 0.11).
#![allow(non_local_definitions)]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use abi_stable;
use abi_stable::library::RootModule;
use abi_stable::sabi_trait;
use abi_stable::sabi_types::VersionStrings;
use abi_stable::std_types::{RBox, RDuration, ROption, RResult, RStr, RString, RVec};
use abi_stable::{declare_root_module_statics, package_version_strings, RRef, StableAbi};

use crate::effects::{
    Effects, FileRead, HttpMethod, HttpReport, HttpRequest, LockGuard, SpawnError, SpawnReport,
    SpawnRequest, StdoutSink,
};
use crate::error::{HandlerError, HandlerErrorKind};
use crate::handler::Handler;
use crate::handler_name::HandlerName;
use crate::outcome::HandlerOutput;
use crate::plan::{LanePlan, LaneRequest, Transport};

// ---------------------------------------------------------------------------------------------
// FFI-safe data
// ---------------------------------------------------------------------------------------------

/// FFI form of [`StdoutSink`].
#[repr(u8)]
#[derive(StableAbi, Debug, Clone, PartialEq, Eq)]
pub enum FfiStdoutSink {
    /// Streamed to this file.
    File(RString),
    /// Kept in memory, at most this many bytes.
    Memory(u64),
    /// Discarded.
    Discard,
}

/// FFI form of [`SpawnRequest`].
#[repr(C)]
#[derive(StableAbi, Debug, Clone, PartialEq, Eq)]
pub struct FfiSpawnRequest {
    /// Program.
    pub program: RString,
    /// Argument vector.
    pub args: RVec<RString>,
    /// File streamed to stdin.
    pub stdin: ROption<RString>,
    /// Where stdout goes.
    pub stdout: FfiStdoutSink,
    /// The stderr sidecar.
    pub stderr_path: ROption<RString>,
    /// Wall-clock bound.
    pub timeout: RDuration,
}

/// FFI form of [`SpawnError`].
#[repr(u8)]
#[derive(StableAbi, Debug, Clone, PartialEq, Eq)]
pub enum FfiSpawnError {
    /// [`SpawnError::TimedOut`].
    TimedOut,
    /// [`SpawnError::NotFound`].
    NotFound,
    /// [`SpawnError::PermissionDenied`].
    PermissionDenied,
    /// [`SpawnError::OutputTooLarge`].
    OutputTooLarge,
    /// [`SpawnError::Os`].
    Os(RString),
    /// [`SpawnError::Refused`].
    Refused(RString),
}

/// FFI form of [`SpawnReport`].
#[repr(C)]
#[derive(StableAbi, Debug, Clone, PartialEq, Eq)]
pub struct FfiSpawnReport {
    /// Exit code.
    pub exit_code: ROption<i32>,
    /// Error, if any.
    pub error: ROption<FfiSpawnError>,
    /// Stdout kept in memory.
    pub stdout: RString,
    /// Stderr kept in memory.
    pub stderr: RString,
    /// Bytes written to the stdout sink.
    pub stdout_bytes: u64,
    /// Wall time.
    pub elapsed: RDuration,
}

/// FFI form of [`HttpRequest`].
#[repr(C)]
#[derive(StableAbi, Debug, Clone, PartialEq, Eq)]
pub struct FfiHttpRequest {
    /// `true` for `POST`, `false` for `GET`.
    pub post: bool,
    /// Absolute URL.
    pub url: RString,
    /// JSON body for `POST`.
    pub json_body: ROption<RString>,
    /// Bound covering connect, send and body read.
    pub timeout: RDuration,
}

/// FFI form of [`HttpReport`].
#[repr(u8)]
#[derive(StableAbi, Debug, Clone, PartialEq, Eq)]
pub enum FfiHttpReport {
    /// A response arrived: status and body.
    Response(u16, RString),
    /// No response, with a short description.
    Failed(RString),
}

/// FFI form of [`FileRead`].
#[repr(u8)]
#[derive(StableAbi, Debug, Clone, PartialEq, Eq)]
pub enum FfiFileRead {
    /// The file's text.
    Text(RString),
    /// No such file.
    Missing,
    /// Exists but could not be read.
    Unreadable(RString),
}

/// FFI form of [`HandlerError`]; `kind` is the stable kebab-case name of the kind.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, PartialEq, Eq)]
pub struct FfiHandlerError {
    /// `malformed-lane`, `io`, `lock` or `other` (anything else reads as `other`).
    pub kind: RString,
    /// The message.
    pub message: RString,
}

/// FFI form of [`HandlerOutput`].
#[repr(C)]
#[derive(StableAbi, Debug, Clone, PartialEq, Eq)]
pub struct FfiHandlerOutput {
    /// The review text.
    pub review: RString,
    /// Extra diagnostic for the generic stub.
    pub diagnostic: ROption<RString>,
    /// The handler's own stub.
    pub own_stub: ROption<RString>,
    /// Which source produced the review.
    pub source: ROption<RString>,
    /// Stamped as reviewed without repository access.
    pub blind: bool,
    /// Notes for the run report.
    pub notes: RVec<RString>,
}

// ---------------------------------------------------------------------------------------------
// FFI-safe traits
// ---------------------------------------------------------------------------------------------

/// An exclusive lock held by the host until this object is dropped.
#[sabi_trait]
pub trait FfiLock: Send {
    /// The key the lock was taken under.
    #[sabi(last_prefix_field)]
    fn key(&self) -> RString;
}

/// A boxed [`FfiLock`] owned by the module; dropping it releases the host's lock.
pub type FfiLockBox = FfiLock_TO<'static, RBox<()>>;

/// The host's [`Effects`], as a module sees them.
#[sabi_trait]
pub trait FfiEffects {
    /// [`Effects::spawn`].
    fn spawn(&self, request: &FfiSpawnRequest) -> FfiSpawnReport;
    /// [`Effects::http`].
    fn http(&self, request: &FfiHttpRequest) -> FfiHttpReport;
    /// [`Effects::read_text`].
    fn read_text(&self, path: RStr<'_>, max_bytes: u64) -> FfiFileRead;
    /// [`Effects::home_dir`] (`None` also when it is not valid UTF-8).
    fn home_dir(&self) -> ROption<RString>;
    /// [`Effects::lock`].
    fn lock(&self, key: RStr<'_>, wait: RDuration) -> RResult<FfiLockBox, FfiHandlerError>;
    /// [`Effects::warn`].
    fn warn(&self, message: RStr<'_>);
    /// [`Effects::remaining`].
    #[sabi(last_prefix_field)]
    fn remaining(&self) -> RDuration;
}

/// A borrowed [`FfiEffects`] handed to a module for one run.
pub type FfiEffectsRef<'a> = FfiEffects_TO<'a, RRef<'a, ()>>;

/// A handler as a compiled module exports it.
#[sabi_trait]
pub trait FfiHandler: Send + Sync {
    /// [`Handler::name`], as written in descriptors.
    fn name(&self) -> RString;
    /// [`Handler::describe`].
    fn describe(&self) -> RString;
    /// [`Handler::transport`], as written in descriptors.
    fn transport(&self) -> RString;
    /// [`Handler::sdk_version`].
    fn sdk_version(&self) -> RString;
    /// [`Handler::run`]; `plan_json` is the [`LanePlan`] wire form.
    #[sabi(last_prefix_field)]
    fn run(
        &self,
        effects: FfiEffectsRef<'_>,
        plan_json: RStr<'_>,
        repo_root: RStr<'_>,
    ) -> RResult<FfiHandlerOutput, FfiHandlerError>;
}

/// A boxed [`FfiHandler`], as the module's constructor returns it.
pub type FfiHandlerBox = FfiHandler_TO<'static, RBox<()>>;

/// The root module of a compiled handler module.
///
/// A module whose root lacks a field is refused, never a panic: the fields up to
/// `new_handler` (the `last_prefix_field`) are checked by abi_stable's layout check when the
/// library is loaded, which refuses a root short of any of them; a field appended below it
/// reads as an `Option` (abi_stable's default `missing_field` behaviour, deliberately not
/// `panic`), and the loader must refuse a module whose `None` it cannot do without.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = HandlerModuleRef)))]
pub struct HandlerModule {
    /// The SDK version the module was built with ([`crate::SDK_VERSION`] of its build).
    pub sdk_version: extern "C" fn() -> RStr<'static>,
    /// Builds the module's handler.
    #[sabi(last_prefix_field)]
    pub new_handler: extern "C" fn() -> FfiHandlerBox,
}

impl RootModule for HandlerModuleRef {
    declare_root_module_statics! {HandlerModuleRef}
    const BASE_NAME: &'static str = "gsd_lane_handler";
    const NAME: &'static str = "gsd-lane handler module";
    const VERSION_STRINGS: VersionStrings = package_version_strings!();
}

/// The [`crate::SDK_VERSION`] of this build, as the root module's `sdk_version` reports it.
pub extern "C" fn this_sdk_version() -> RStr<'static> {
    RStr::from_str(crate::SDK_VERSION)
}

/// Exports `$handler` (a value whose type implements [`Handler`]) as this library's root module.
///
/// Put it once in a `cdylib` crate that depends on `gsd-lane-sdk` (feature `abi`) and on
/// `abi_stable` (the attribute it expands to names `::abi_stable`):
///
/// ```no_run
/// use gsd_lane_sdk::{Effects, Handler, HandlerError, HandlerName, HandlerOutput, LaneRequest, Transport};
///
/// /// A handler that always answers the same review.
/// pub struct Canned;
///
/// impl Handler for Canned {
///     fn name(&self) -> HandlerName { HandlerName::new("opencode") }
///     fn describe(&self) -> &'static str { "answers a canned review" }
///     fn transport(&self) -> Transport { Transport::Spawn }
///     fn run(&self, _: &dyn Effects, _: &LaneRequest) -> Result<HandlerOutput, HandlerError> {
///         Ok(HandlerOutput::review("LGTM", "canned"))
///     }
/// }
///
/// gsd_lane_sdk::export_handler!(Canned);
/// # fn main() {}
/// ```
///
/// The in-tree example is `handlers/modules/opencode-module`:
/// `gsd_lane_sdk::export_handler!(gsd_lane_handlers::api::opencode::Opencode);`.
#[macro_export]
macro_rules! export_handler {
    ($handler:expr) => {
        mod __gsd_lane_handler_export {
            #[allow(unused_imports)]
            use super::*;

            /// The root module of this handler library.
            #[::abi_stable::export_root_module]
            pub fn gsd_lane_handler_root_module() -> $crate::abi::HandlerModuleRef {
                extern "C" fn new_handler() -> $crate::abi::FfiHandlerBox {
                    $crate::abi::handler_to_ffi($handler)
                }
                $crate::abi::module_ref($crate::abi::this_sdk_version, new_handler)
            }
        }
    };
}

/// Builds the root module from its two functions (what [`export_handler!`](crate::export_handler)
/// expands to; a test module may pass its own `sdk_version`).
pub fn module_ref(
    sdk_version: extern "C" fn() -> RStr<'static>,
    new_handler: extern "C" fn() -> FfiHandlerBox,
) -> HandlerModuleRef {
    use abi_stable::prefix_type::PrefixTypeTrait;
    HandlerModule {
        sdk_version,
        new_handler,
    }
    .leak_into_prefix()
}

// ---------------------------------------------------------------------------------------------
// Conversions
// ---------------------------------------------------------------------------------------------

fn path_text(path: &Path) -> Result<RString, String> {
    path.to_str()
        .map(RString::from)
        .ok_or_else(|| format!("path {} is not valid UTF-8", path.display()))
}

fn opt_path(path: Option<&PathBuf>) -> Result<ROption<RString>, String> {
    match path {
        Some(path) => path_text(path).map(ROption::RSome),
        None => Ok(ROption::RNone),
    }
}

fn to_ffi_spawn_request(request: &SpawnRequest) -> Result<FfiSpawnRequest, String> {
    Ok(FfiSpawnRequest {
        program: request.program.as_str().into(),
        args: request
            .args
            .iter()
            .map(|a| RString::from(a.as_str()))
            .collect(),
        stdin: opt_path(request.stdin.as_ref())?,
        stdout: match &request.stdout {
            StdoutSink::File(path) => FfiStdoutSink::File(path_text(path)?),
            StdoutSink::Memory(max) => FfiStdoutSink::Memory(*max as u64),
            StdoutSink::Discard => FfiStdoutSink::Discard,
        },
        stderr_path: opt_path(request.stderr_path.as_ref())?,
        timeout: request.timeout.into(),
    })
}

fn from_ffi_spawn_request(request: &FfiSpawnRequest) -> SpawnRequest {
    SpawnRequest {
        program: request.program.to_string(),
        args: request.args.iter().map(RString::to_string).collect(),
        stdin: request
            .stdin
            .as_ref()
            .map(|p| PathBuf::from(p.as_str()))
            .into(),
        stdout: match &request.stdout {
            FfiStdoutSink::File(path) => StdoutSink::File(PathBuf::from(path.as_str())),
            FfiStdoutSink::Memory(max) => {
                StdoutSink::Memory(usize::try_from(*max).unwrap_or(usize::MAX))
            }
            FfiStdoutSink::Discard => StdoutSink::Discard,
        },
        stderr_path: request
            .stderr_path
            .as_ref()
            .map(|p| PathBuf::from(p.as_str()))
            .into(),
        timeout: request.timeout.into(),
    }
}

fn to_ffi_spawn_error(error: &SpawnError) -> FfiSpawnError {
    match error {
        SpawnError::TimedOut => FfiSpawnError::TimedOut,
        SpawnError::NotFound => FfiSpawnError::NotFound,
        SpawnError::PermissionDenied => FfiSpawnError::PermissionDenied,
        SpawnError::OutputTooLarge => FfiSpawnError::OutputTooLarge,
        SpawnError::Os(code) => FfiSpawnError::Os(code.as_str().into()),
        SpawnError::Refused(why) => FfiSpawnError::Refused(why.as_str().into()),
    }
}

fn from_ffi_spawn_error(error: &FfiSpawnError) -> SpawnError {
    match error {
        FfiSpawnError::TimedOut => SpawnError::TimedOut,
        FfiSpawnError::NotFound => SpawnError::NotFound,
        FfiSpawnError::PermissionDenied => SpawnError::PermissionDenied,
        FfiSpawnError::OutputTooLarge => SpawnError::OutputTooLarge,
        FfiSpawnError::Os(code) => SpawnError::Os(code.to_string()),
        FfiSpawnError::Refused(why) => SpawnError::Refused(why.to_string()),
    }
}

fn to_ffi_spawn_report(report: &SpawnReport) -> FfiSpawnReport {
    FfiSpawnReport {
        exit_code: report.exit_code.into(),
        error: report.error.as_ref().map(to_ffi_spawn_error).into(),
        stdout: report.stdout.as_str().into(),
        stderr: report.stderr.as_str().into(),
        stdout_bytes: report.stdout_bytes,
        elapsed: report.elapsed.into(),
    }
}

fn from_ffi_spawn_report(report: &FfiSpawnReport) -> SpawnReport {
    SpawnReport {
        exit_code: report.exit_code.into(),
        error: report.error.as_ref().map(from_ffi_spawn_error).into(),
        stdout: report.stdout.to_string(),
        stderr: report.stderr.to_string(),
        stdout_bytes: report.stdout_bytes,
        elapsed: report.elapsed.into(),
    }
}

fn to_ffi_http_request(request: &HttpRequest) -> FfiHttpRequest {
    FfiHttpRequest {
        post: request.method == HttpMethod::Post,
        url: request.url.as_str().into(),
        json_body: request.json_body.as_deref().map(RString::from).into(),
        timeout: request.timeout.into(),
    }
}

fn from_ffi_http_request(request: &FfiHttpRequest) -> HttpRequest {
    HttpRequest {
        method: if request.post {
            HttpMethod::Post
        } else {
            HttpMethod::Get
        },
        url: request.url.to_string(),
        json_body: request.json_body.as_ref().map(RString::to_string).into(),
        timeout: request.timeout.into(),
    }
}

fn to_ffi_http_report(report: &HttpReport) -> FfiHttpReport {
    match report {
        HttpReport::Response { status, body } => {
            FfiHttpReport::Response(*status, body.as_str().into())
        }
        HttpReport::Failed { error } => FfiHttpReport::Failed(error.as_str().into()),
    }
}

fn from_ffi_http_report(report: &FfiHttpReport) -> HttpReport {
    match report {
        FfiHttpReport::Response(status, body) => HttpReport::Response {
            status: *status,
            body: body.to_string(),
        },
        FfiHttpReport::Failed(error) => HttpReport::Failed {
            error: error.to_string(),
        },
    }
}

fn to_ffi_file_read(read: &FileRead) -> FfiFileRead {
    match read {
        FileRead::Text(text) => FfiFileRead::Text(text.as_str().into()),
        FileRead::Missing => FfiFileRead::Missing,
        FileRead::Unreadable(why) => FfiFileRead::Unreadable(why.as_str().into()),
    }
}

fn from_ffi_file_read(read: &FfiFileRead) -> FileRead {
    match read {
        FfiFileRead::Text(text) => FileRead::Text(text.to_string()),
        FfiFileRead::Missing => FileRead::Missing,
        FfiFileRead::Unreadable(why) => FileRead::Unreadable(why.to_string()),
    }
}

fn kind_name(kind: HandlerErrorKind) -> &'static str {
    match kind {
        HandlerErrorKind::MalformedLane => "malformed-lane",
        HandlerErrorKind::Io => "io",
        HandlerErrorKind::Lock => "lock",
        HandlerErrorKind::Other => "other",
    }
}

fn to_ffi_error(error: &HandlerError) -> FfiHandlerError {
    FfiHandlerError {
        kind: kind_name(error.kind).into(),
        message: error.message.as_str().into(),
    }
}

fn from_ffi_error(error: &FfiHandlerError) -> HandlerError {
    let kind = match error.kind.as_str() {
        "malformed-lane" => HandlerErrorKind::MalformedLane,
        "io" => HandlerErrorKind::Io,
        "lock" => HandlerErrorKind::Lock,
        _ => HandlerErrorKind::Other,
    };
    HandlerError::new(kind, error.message.to_string())
}

fn opt_text(text: Option<&String>) -> ROption<RString> {
    text.map(|t| RString::from(t.as_str())).into()
}

fn to_ffi_output(output: &HandlerOutput) -> FfiHandlerOutput {
    FfiHandlerOutput {
        review: output.review.as_str().into(),
        diagnostic: opt_text(output.diagnostic.as_ref()),
        own_stub: opt_text(output.own_stub.as_ref()),
        source: opt_text(output.source.as_ref()),
        blind: output.blind,
        notes: output
            .notes
            .iter()
            .map(|n| RString::from(n.as_str()))
            .collect(),
    }
}

fn from_ffi_output(output: &FfiHandlerOutput) -> HandlerOutput {
    let text = |t: &ROption<RString>| t.as_ref().map(RString::to_string).into_option();
    HandlerOutput {
        review: output.review.to_string(),
        diagnostic: text(&output.diagnostic),
        own_stub: text(&output.own_stub),
        source: text(&output.source),
        blind: output.blind,
        notes: output.notes.iter().map(RString::to_string).collect(),
        model: None,
    }
}

/// Parses a transport as written in descriptors.
fn parse_transport(text: &str) -> Option<Transport> {
    [Transport::Spawn, Transport::OpenAiHttp]
        .into_iter()
        .find(|t| t.as_str() == text)
}

// ---------------------------------------------------------------------------------------------
// Module side: a Handler lifted into FfiHandler, running against forwarded effects
// ---------------------------------------------------------------------------------------------

/// Lifts `handler` into the boxed FFI handler a module exports.
pub fn handler_to_ffi<H: Handler>(handler: H) -> FfiHandlerBox {
    FfiHandler_TO::from_value(ModuleHandler(handler), abi_stable::sabi_trait::TD_Opaque)
}

/// A [`Handler`] seen through [`FfiHandler`].
struct ModuleHandler<H>(H);

impl<H: Handler> FfiHandler for ModuleHandler<H> {
    fn name(&self) -> RString {
        self.0.name().as_str().into()
    }

    fn describe(&self) -> RString {
        self.0.describe().into()
    }

    fn transport(&self) -> RString {
        self.0.transport().as_str().into()
    }

    fn sdk_version(&self) -> RString {
        self.0.sdk_version().into()
    }

    fn run(
        &self,
        effects: FfiEffectsRef<'_>,
        plan_json: RStr<'_>,
        repo_root: RStr<'_>,
    ) -> RResult<FfiHandlerOutput, FfiHandlerError> {
        let plan: LanePlan = match serde_json::from_str(plan_json.as_str()) {
            Ok(plan) => plan,
            Err(err) => {
                return RResult::RErr(to_ffi_error(&HandlerError::malformed(format!(
                    "the host sent a plan this module cannot read: {err}"
                ))))
            }
        };
        let request = LaneRequest {
            plan,
            repo_root: repo_root.to_string(),
        };
        let forwarded = ForwardedEffects { host: effects };
        let ran = catch_unwind(AssertUnwindSafe(|| self.0.run(&forwarded, &request)));
        match ran {
            Ok(Ok(output)) => RResult::ROk(to_ffi_output(&output)),
            Ok(Err(error)) => RResult::RErr(to_ffi_error(&error)),
            Err(_) => RResult::RErr(to_ffi_error(&HandlerError::new(
                HandlerErrorKind::Other,
                format!("handler {} panicked inside its module", self.0.name()),
            ))),
        }
    }
}

/// The module-side [`Effects`]: every call goes to the host.
struct ForwardedEffects<'a> {
    host: FfiEffectsRef<'a>,
}

/// The module-side guard of a host lock.
struct ForwardedLock(#[allow(dead_code)] FfiLockBox);
impl LockGuard for ForwardedLock {}

impl Effects for ForwardedEffects<'_> {
    fn spawn(&self, request: &SpawnRequest) -> SpawnReport {
        match to_ffi_spawn_request(request) {
            Ok(request) => from_ffi_spawn_report(&self.host.spawn(&request)),
            Err(why) => SpawnReport {
                error: Some(SpawnError::Refused(why)),
                ..SpawnReport::default()
            },
        }
    }

    fn http(&self, request: &HttpRequest) -> HttpReport {
        from_ffi_http_report(&self.host.http(&to_ffi_http_request(request)))
    }

    fn read_text(&self, path: &Path, max_bytes: u64) -> FileRead {
        match path.to_str() {
            Some(path) => from_ffi_file_read(&self.host.read_text(path.into(), max_bytes)),
            None => FileRead::Unreadable(format!("path {} is not valid UTF-8", path.display())),
        }
    }

    fn home_dir(&self) -> Option<PathBuf> {
        self.host
            .home_dir()
            .map(|home| PathBuf::from(home.as_str()))
            .into_option()
    }

    fn lock(&self, key: &str, wait: Duration) -> Result<Box<dyn LockGuard>, HandlerError> {
        match self.host.lock(key.into(), wait.into()) {
            RResult::ROk(guard) => Ok(Box::new(ForwardedLock(guard))),
            RResult::RErr(error) => Err(from_ffi_error(&error)),
        }
    }

    fn warn(&self, message: &str) {
        self.host.warn(message.into());
    }

    fn remaining(&self) -> Duration {
        self.host.remaining().into()
    }
}

// ---------------------------------------------------------------------------------------------
// Host side: a loaded FfiHandler seen as a Handler, given bridged host effects
// ---------------------------------------------------------------------------------------------

/// Why a loaded module's handler cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ModuleRefusal {
    /// The declared name is outside the closed first-party set.
    UnknownName {
        /// The declared name.
        name: String,
        /// The names of the closed set.
        known: Vec<&'static str>,
    },
    /// The declared SDK version is not caret-compatible with the host's.
    IncompatibleSdk {
        /// The module's SDK version.
        module: String,
        /// The host's SDK version.
        host: String,
    },
    /// The declared transport is not one the host knows.
    UnknownTransport(String),
}

impl std::fmt::Display for ModuleRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ModuleRefusal::UnknownName { name, known } => write!(
                f,
                "the module declares handler name {name:?}, which is not a first-party handler \
                 (known: {})",
                known.join(", ")
            ),
            ModuleRefusal::IncompatibleSdk { module, host } => write!(
                f,
                "the module was built with gsd-lane-sdk {module}, which is incompatible with \
                 this host's gsd-lane-sdk {host}"
            ),
            ModuleRefusal::UnknownTransport(transport) => {
                write!(f, "the module declares an unknown transport {transport:?}")
            }
        }
    }
}

impl std::error::Error for ModuleRefusal {}

/// A module's handler, checked and usable as a [`Handler`].
pub struct LoadedHandler {
    inner: FfiHandlerBox,
    name: HandlerName,
    transport: Transport,
    describe: &'static str,
    sdk_version: &'static str,
}

impl std::fmt::Debug for LoadedHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedHandler")
            .field("name", &self.name)
            .field("transport", &self.transport)
            .field("sdk_version", &self.sdk_version)
            .finish_non_exhaustive()
    }
}

impl LoadedHandler {
    /// Checks a module's handler: SDK version first, then the name against `known` (the
    /// host's registered handler names), then the transport.
    ///
    /// The describe text and version are leaked once per load (a loaded library is never
    /// unloaded either), so the result lives as long as the process.
    ///
    /// # Errors
    ///
    /// [`ModuleRefusal`] naming what does not fit.
    pub fn new(
        inner: FfiHandlerBox,
        known: &[HandlerName],
    ) -> Result<LoadedHandler, ModuleRefusal> {
        let version = inner.sdk_version().to_string();
        if !crate::is_compatible(crate::SDK_VERSION, &version) {
            return Err(ModuleRefusal::IncompatibleSdk {
                module: version,
                host: crate::SDK_VERSION.to_owned(),
            });
        }
        let declared = inner.name().to_string();
        let name = HandlerName::find(known.iter().copied(), &declared).ok_or_else(|| {
            ModuleRefusal::UnknownName {
                name: declared.clone(),
                known: known.iter().map(|n| n.as_str()).collect(),
            }
        })?;
        let transport_text = inner.transport().to_string();
        let transport = parse_transport(&transport_text)
            .ok_or(ModuleRefusal::UnknownTransport(transport_text))?;
        let describe: &'static str = Box::leak(inner.describe().to_string().into_boxed_str());
        let sdk_version: &'static str = Box::leak(version.into_boxed_str());
        Ok(LoadedHandler {
            inner,
            name,
            transport,
            describe,
            sdk_version,
        })
    }
}

impl Handler for LoadedHandler {
    fn name(&self) -> HandlerName {
        self.name
    }

    fn describe(&self) -> &'static str {
        self.describe
    }

    fn transport(&self) -> Transport {
        self.transport
    }

    fn run(
        &self,
        effects: &dyn Effects,
        request: &LaneRequest,
    ) -> Result<HandlerOutput, HandlerError> {
        let plan_json = serde_json::to_string(&request.plan).map_err(|err| {
            HandlerError::new(
                HandlerErrorKind::Other,
                format!("encoding the plan for the module: {err}"),
            )
        })?;
        let bridge = HostBridge { inner: effects };
        let ffi = FfiEffects_TO::from_ptr(&bridge, abi_stable::sabi_trait::TD_Opaque);
        match self.inner.run(
            ffi,
            plan_json.as_str().into(),
            request.repo_root.as_str().into(),
        ) {
            RResult::ROk(output) => Ok(from_ffi_output(&output)),
            RResult::RErr(error) => Err(from_ffi_error(&error)),
        }
    }

    fn sdk_version(&self) -> &'static str {
        self.sdk_version
    }
}

/// The host's effects as [`FfiEffects`]: every call forwards to the host's own checks.
struct HostBridge<'a> {
    inner: &'a dyn Effects,
}

/// A host lock kept alive by the module.
struct HostLock {
    key: String,
    _guard: Box<dyn LockGuard>,
}

impl FfiLock for HostLock {
    fn key(&self) -> RString {
        self.key.as_str().into()
    }
}

impl FfiEffects for HostBridge<'_> {
    fn spawn(&self, request: &FfiSpawnRequest) -> FfiSpawnReport {
        to_ffi_spawn_report(&self.inner.spawn(&from_ffi_spawn_request(request)))
    }

    fn http(&self, request: &FfiHttpRequest) -> FfiHttpReport {
        to_ffi_http_report(&self.inner.http(&from_ffi_http_request(request)))
    }

    fn read_text(&self, path: RStr<'_>, max_bytes: u64) -> FfiFileRead {
        to_ffi_file_read(&self.inner.read_text(Path::new(path.as_str()), max_bytes))
    }

    fn home_dir(&self) -> ROption<RString> {
        self.inner
            .home_dir()
            .and_then(|home| home.to_str().map(RString::from))
            .into()
    }

    fn lock(&self, key: RStr<'_>, wait: RDuration) -> RResult<FfiLockBox, FfiHandlerError> {
        match self.inner.lock(key.as_str(), wait.into()) {
            Ok(guard) => RResult::ROk(FfiLock_TO::from_value(
                HostLock {
                    key: key.to_string(),
                    _guard: guard,
                },
                abi_stable::sabi_trait::TD_Opaque,
            )),
            Err(error) => RResult::RErr(to_ffi_error(&error)),
        }
    }

    fn warn(&self, message: RStr<'_>) {
        self.inner.warn(message.as_str());
    }

    fn remaining(&self) -> RDuration {
        self.inner.remaining().into()
    }
}

#[cfg(test)]
#[allow(clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::testing::{FakeEffects, FakeProcess};

    /// The registered names the loader checks modules against in these tests.
    const KNOWN: [HandlerName; 2] = [
        HandlerName::new("antigravity"),
        HandlerName::new("opencode"),
    ];

    /// Uses every effect once and reports what came back.
    struct Everything;

    impl Handler for Everything {
        fn name(&self) -> HandlerName {
            HandlerName::new("opencode")
        }
        fn describe(&self) -> &'static str {
            "uses every effect"
        }
        fn transport(&self) -> Transport {
            Transport::Spawn
        }
        fn run(&self, fx: &dyn Effects, req: &LaneRequest) -> Result<HandlerOutput, HandlerError> {
            let _lock = fx.lock("k", Duration::from_secs(1))?;
            let report = fx.spawn(&SpawnRequest {
                program: "tool".into(),
                args: vec!["a b".into(), "-p".into()],
                stdin: Some(PathBuf::from("/in")),
                stdout: StdoutSink::Memory(3),
                stderr_path: None,
                timeout: Duration::from_millis(1500),
            });
            let http = fx.http(&HttpRequest {
                method: HttpMethod::Post,
                url: "http://h/x".into(),
                json_body: Some("{}".into()),
                timeout: Duration::from_secs(2),
            });
            let read = fx.read_text(Path::new("/f"), 10);
            fx.warn("careful");
            let mut out = HandlerOutput::review(report.stdout.clone(), "stdout");
            out.diagnostic = Some(format!("{http:?}|{read:?}|{:?}", fx.home_dir()));
            out.notes = vec![req.repo_root.clone(), req.plan.slug.clone()];
            out.blind = report.exit_code == Some(3);
            Ok(out)
        }
    }

    struct Panics;

    impl Handler for Panics {
        fn name(&self) -> HandlerName {
            HandlerName::new("antigravity")
        }
        fn describe(&self) -> &'static str {
            "panics"
        }
        fn transport(&self) -> Transport {
            Transport::Spawn
        }
        fn run(&self, _: &dyn Effects, _: &LaneRequest) -> Result<HandlerOutput, HandlerError> {
            panic!("boom")
        }
    }

    #[test]
    fn a_handler_round_trips_through_the_ffi_layer_and_uses_the_host_effects() {
        let loaded = LoadedHandler::new(handler_to_ffi(Everything), &KNOWN).expect("checks pass");
        assert_eq!(loaded.name(), HandlerName::new("opencode"));
        assert_eq!(loaded.transport(), Transport::Spawn);
        assert_eq!(loaded.describe(), "uses every effect");
        assert_eq!(loaded.sdk_version(), crate::SDK_VERSION);
        let fx = FakeEffects::new()
            .home("/home/u")
            .file("/f", "text")
            .http_answer("http://h/x", 201, "body")
            .process(FakeProcess::prints("abcdef").exit(3));
        let mut req = crate::testing::request_spawn("lane", "tool");
        req.repo_root = "/the repo".into();
        let out = loaded.run(&fx, &req).expect("runs");
        assert_eq!(out.review, "abc", "the host's memory cap applied");
        assert_eq!(out.source.as_deref(), Some("stdout"));
        assert!(out.blind);
        assert_eq!(out.notes, vec!["/the repo".to_owned(), "lane".to_owned()]);
        assert_eq!(
            out.diagnostic.as_deref(),
            Some("Response { status: 201, body: \"body\" }|Text(\"text\")|Some(\"/home/u\")")
        );
        let spawned = fx.spawn_calls();
        assert_eq!(spawned.len(), 1);
        assert_eq!(spawned[0].args, vec!["a b".to_owned(), "-p".to_owned()]);
        assert_eq!(spawned[0].stdin, Some(PathBuf::from("/in")));
        assert_eq!(spawned[0].timeout, Duration::from_millis(1500));
        assert_eq!(fx.http_calls()[0].method, HttpMethod::Post);
        assert_eq!(fx.http_calls()[0].json_body.as_deref(), Some("{}"));
        assert_eq!(fx.warnings(), vec!["careful".to_owned()]);
        assert_eq!(fx.locks(), vec!["k".to_owned()]);
    }

    #[test]
    fn a_panicking_module_handler_is_an_error_not_an_abort() {
        let loaded = LoadedHandler::new(handler_to_ffi(Panics), &KNOWN).expect("checks pass");
        let err = loaded
            .run(
                &FakeEffects::new(),
                &crate::testing::request_spawn("x", "x"),
            )
            .expect_err("panic becomes an error");
        assert!(err.message.contains("panicked"), "{err}");
    }

    /// The root module as a module built against an interface without `new_handler` declares
    /// it: same package, same type name, one field short. Only its layout is used.
    #[allow(dead_code)]
    mod short_root {
        use super::super::*;

        /// [`HandlerModule`](super::super::HandlerModule) without its `new_handler` field.
        #[repr(C)]
        #[derive(StableAbi)]
        #[sabi(kind(Prefix(prefix_ref = HandlerModuleRef)))]
        pub struct HandlerModule {
            /// The SDK version.
            #[sabi(last_prefix_field)]
            pub sdk_version: extern "C" fn() -> RStr<'static>,
        }
    }

    #[test]
    fn a_root_module_that_lacks_a_field_fails_the_load_time_layout_check() {
        use abi_stable::abi_stability::abi_checking::check_layout_compatibility;
        let expected = <HandlerModuleRef as StableAbi>::LAYOUT;
        assert!(check_layout_compatibility(expected, expected).is_ok());
        let short = <short_root::HandlerModuleRef as StableAbi>::LAYOUT;
        let errors = check_layout_compatibility(expected, short).expect_err("refused");
        let text = errors.to_string();
        assert!(
            text.contains("prefix-types have a different prefix") && text.contains("new_handler"),
            "{text}"
        );
    }

    #[test]
    fn plans_survive_the_json_wire_form() {
        let spawn = crate::testing::request_spawn("x", "tool").plan;
        let text = serde_json::to_string(&spawn).expect("encodes");
        assert_eq!(
            serde_json::from_str::<LanePlan>(&text).expect("decodes"),
            spawn
        );
        let mut http = spawn.clone();
        http.transport = Transport::OpenAiHttp;
        http.shape = crate::PlanShape::Http(crate::HttpPlan {
            host: "http://localhost:1".into(),
            host_config_key: "review.hosts.x".into(),
            url: "http://localhost:1/v1/chat/completions".into(),
            models_url: None,
            model: Some("m".into()),
            fallback_model: "f".into(),
        });
        let text = serde_json::to_string(&http).expect("encodes");
        assert_eq!(
            serde_json::from_str::<LanePlan>(&text).expect("decodes"),
            http
        );
    }

    #[test]
    fn errors_keep_their_kind_across_the_boundary() {
        for kind in [
            HandlerErrorKind::MalformedLane,
            HandlerErrorKind::Io,
            HandlerErrorKind::Lock,
            HandlerErrorKind::Other,
        ] {
            let error = HandlerError::new(kind, "m");
            assert_eq!(from_ffi_error(&to_ffi_error(&error)), error);
        }
    }

    #[test]
    fn refusal_messages_name_both_versions_and_the_known_names() {
        let text = ModuleRefusal::IncompatibleSdk {
            module: "0.9.0".into(),
            host: "0.1.0".into(),
        }
        .to_string();
        assert!(text.contains("0.9.0") && text.contains("0.1.0"), "{text}");
        let text = ModuleRefusal::UnknownName {
            name: "acme".into(),
            known: vec!["antigravity", "opencode"],
        }
        .to_string();
        assert!(text.contains("\"acme\"") && text.contains("antigravity, opencode"));
    }
}
