//! `tracing` spans and events as d9prof records (feature `tracing`).
//!
//! [`D9Layer`] is a [`tracing_subscriber::Layer`]: put it on a registry and
//! the application's spans (a request, a database call) become d9prof
//! spans, its events d9prof events. `d9prof spans` then tells where each
//! kind of span spent its time (entered and on CPU, blocked, on the run
//! queue, or waiting to be polled), `d9prof spans --instances` explains the
//! slowest ones (which tasks served them, CPU in which code, blocked in
//! which call), `d9prof flame --span NAME [--min DUR]` is the CPU profile
//! of those spans alone and `d9prof events` counts the events.
//!
//! ```no_run
//! use tracing_subscriber::prelude::*;
//!
//! tracing_subscriber::registry()
//!     .with(d9prof::tracing::D9Layer::new())
//!     .init();
//! ```
//!
//! Only some targets, e.g. the application's own spans and none of its
//! libraries': a per-layer filter,
//! [`Targets`](tracing_subscriber::filter::Targets), with `.with_filter`
//! (the layer's own filter: other layers, a `fmt` one, see every span
//! still):
//!
//! ```no_run
//! use tracing_subscriber::filter::{LevelFilter, Targets};
//! use tracing_subscriber::prelude::*;
//!
//! let only_mine = Targets::new()
//!     .with_target("myapp", LevelFilter::INFO)
//!     .with_target("myapp::db", LevelFilter::DEBUG);
//! tracing_subscriber::registry()
//!     .with(d9prof::tracing::D9Layer::new().with_filter(only_mine))
//!     .init();
//! ```
//!
//! What each callback records:
//! - a new span: its id (tracing's [`Id`], which the registry keeps unique
//!   among open spans and reuses once one closes: the shim's contract for a
//!   span id), its parent's (the explicit parent, else the current span
//!   when it is contextual, else none; with a per-layer filter, the nearest
//!   ancestor the filter kept), its name (`metadata().name()`, cut to 87
//!   bytes), then its target as the text field `target` and its first
//!   [`SPAN_FIELDS`] recorded fields: integers as numbers, anything else
//!   (strings, booleans, floats, `?debug` and `%display` values) as text
//!   cut to 39 bytes (keys to 47);
//! - `Span::record`: the values recorded, as fields the same way;
//! - enter, exit, close: the same of the span (enter and exit on the
//!   calling thread, e.g. each poll of an `#[instrument]`ed future);
//! - an event: its name is its message (`info!("served {n}")`), or its
//!   metadata's name (`event src/main.rs:42`) when it has none, cut to 47
//!   bytes; its value, its first integer field (0 if none); its text, its
//!   first field that is neither the message nor an integer (as text
//!   above, to 47 bytes).
//!
//! Cuts fall on a character boundary. Every callback first reads the
//! shim's inline gate (two words, one branch, as the poll markers do) and
//! returns at once while no recorder is attached: no lookup, no formatting,
//! no allocation. Attached, it allocates nothing either: strings are
//! formatted into buffers on the stack, and a long `Debug` stops there.
//! Spans created while nobody records are not named in a recording: their
//! enters then show as "[span created before the recording]".

use std::fmt::{self, Write as _};
use std::os::raw::c_char;

use tracing_core::field::{Field, Visit};
use tracing_core::span::{Attributes, Id, Record};
use tracing_core::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::registry::LookupSpan;

use crate::{ffi, gate_open};

/// How many of a new span's fields are recorded (besides `target`); an
/// `on_record` call records at most as many.
pub const SPAN_FIELDS: usize = 4;

// what the shim keeps, NUL included (include/d9prof.h)
const SPAN_NAME: usize = 88;
const KEY: usize = 48;
const FIELD_TEXT: usize = 40;
const EVENT_NAME: usize = 48;
const EVENT_TEXT: usize = 48;

/// A [`Layer`] that records spans and events for d9prof; see the
/// [module documentation](self).
#[derive(Clone, Copy, Debug, Default)]
pub struct D9Layer {
    _private: (),
}

impl D9Layer {
    /// The layer (it holds nothing: the shim is process-wide).
    pub fn new() -> Self {
        D9Layer { _private: () }
    }
}

impl<S> Layer<S> for D9Layer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if !gate_open() {
            return;
        }
        new_span(attrs, id, &ctx);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _ctx: Context<'_, S>) {
        if !gate_open() {
            return;
        }
        record_fields(id, values);
    }

    fn on_enter(&self, id: &Id, _ctx: Context<'_, S>) {
        if gate_open() {
            // SAFETY: plain value argument.
            unsafe { ffi::d9_span_enter(id.into_u64()) }
        }
    }

    fn on_exit(&self, id: &Id, _ctx: Context<'_, S>) {
        if gate_open() {
            // SAFETY: plain value argument.
            unsafe { ffi::d9_span_exit(id.into_u64()) }
        }
    }

    fn on_close(&self, id: Id, _ctx: Context<'_, S>) {
        if gate_open() {
            // SAFETY: plain value argument.
            unsafe { ffi::d9_span_close(id.into_u64()) }
        }
    }

    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        if !gate_open() {
            return;
        }
        record_event(event);
    }
}

/// The attached side of on_new_span: out of line, off the detached path.
#[cold]
#[inline(never)]
fn new_span<S>(attrs: &Attributes<'_>, id: &Id, ctx: &Context<'_, S>)
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    let span = id.into_u64();
    // the registry's parent (explicit, or the current span when
    // contextual), through this layer's filter
    let parent = ctx
        .span(id)
        .and_then(|s| s.parent())
        .map_or(0, |p| p.id().into_u64());
    let meta = attrs.metadata();
    let name = CBuf::<SPAN_NAME>::of(meta.name());
    let target = CBuf::<FIELD_TEXT>::of(meta.target());
    // SAFETY: NUL-terminated strings on our stack, copied by the shim.
    unsafe {
        ffi::d9_span_new(span, parent, name.as_ptr());
        ffi::d9_span_field(span, c"target".as_ptr(), 0, target.as_ptr());
    }
    attrs.record(&mut SpanFields::new(span));
}

/// The attached side of on_record.
#[cold]
#[inline(never)]
fn record_fields(id: &Id, values: &Record<'_>) {
    values.record(&mut SpanFields::new(id.into_u64()));
}

/// The attached side of on_event.
#[cold]
#[inline(never)]
fn record_event(event: &Event<'_>) {
    let mut v = EventFields::default();
    event.record(&mut v);
    if !v.has_name {
        v.name.push_str(event.metadata().name());
    }
    let text = if v.has_text {
        v.text.as_ptr()
    } else {
        std::ptr::null()
    };
    // SAFETY: NUL-terminated strings on our stack (or NULL), copied by
    // the shim.
    unsafe { ffi::d9_event(v.name.as_ptr(), v.value.unwrap_or(0), text) }
}

/// A NUL-terminated string of at most `N - 1` bytes on the stack, cut at a
/// character boundary: what the shim copies, with no allocation.
struct CBuf<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> CBuf<N> {
    fn new() -> Self {
        CBuf {
            buf: [0; N],
            len: 0,
        }
    }

    fn of(s: &str) -> Self {
        let mut b = Self::new();
        b.push_str(s);
        b
    }

    /// Appends what fits of `s` (to a character boundary, and to a NUL
    /// in it, which would end the C string there anyway); false if cut.
    fn push_str(&mut self, s: &str) -> bool {
        let (s, whole) = match s.find('\0') {
            Some(i) => (&s[..i], false),
            None => (s, true),
        };
        let room = N - 1 - self.len;
        let mut n = s.len().min(room);
        while !s.is_char_boundary(n) {
            n -= 1;
        }
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        whole && n == s.len()
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[cfg(test)]
    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.len]).unwrap()
    }

    /// The C string: `buf[len]` is always 0 (nothing is written past
    /// `N - 1` bytes, and the rest stays zeroed).
    fn as_ptr(&self) -> *const c_char {
        self.buf.as_ptr().cast()
    }
}

impl<const N: usize> fmt::Write for CBuf<N> {
    /// An error once full: a long `Debug` stops formatting there.
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if self.push_str(s) {
            Ok(())
        } else {
            Err(fmt::Error)
        }
    }
}

/// Fields of span `span`, each a `d9_span_field`, at most [`SPAN_FIELDS`].
struct SpanFields {
    span: u64,
    left: usize,
}

impl SpanFields {
    fn new(span: u64) -> Self {
        SpanFields {
            span,
            left: SPAN_FIELDS,
        }
    }

    fn take(&mut self) -> bool {
        if self.left == 0 {
            return false;
        }
        self.left -= 1;
        true
    }

    fn number(&mut self, field: &Field, value: i64) {
        if self.take() {
            let key = CBuf::<KEY>::of(field.name());
            // SAFETY: a NUL-terminated key on our stack, no text.
            unsafe { ffi::d9_span_field(self.span, key.as_ptr(), value, std::ptr::null()) }
        }
    }

    fn text(&mut self, field: &Field, write: impl FnOnce(&mut CBuf<FIELD_TEXT>)) {
        if self.take() {
            let key = CBuf::<KEY>::of(field.name());
            let mut text = CBuf::<FIELD_TEXT>::new();
            write(&mut text);
            if text.is_empty() {
                // the shim reads an empty text as a number
                text.push_str("\"\"");
            }
            // SAFETY: NUL-terminated strings on our stack, copied.
            unsafe { ffi::d9_span_field(self.span, key.as_ptr(), 0, text.as_ptr()) }
        }
    }
}

impl Visit for SpanFields {
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.number(field, value);
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        match i64::try_from(value) {
            Ok(v) => self.number(field, v),
            Err(_) => self.text(field, |t| {
                let _ = write!(t, "{value}");
            }),
        }
    }

    fn record_i128(&mut self, field: &Field, value: i128) {
        match i64::try_from(value) {
            Ok(v) => self.number(field, v),
            Err(_) => self.text(field, |t| {
                let _ = write!(t, "{value}");
            }),
        }
    }

    fn record_u128(&mut self, field: &Field, value: u128) {
        match i64::try_from(value) {
            Ok(v) => self.number(field, v),
            Err(_) => self.text(field, |t| {
                let _ = write!(t, "{value}");
            }),
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.text(field, |t| {
            t.push_str(value);
        });
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.text(field, |t| {
            let _ = write!(t, "{value:?}");
        });
    }
}

/// What an event becomes: its name (the message), value and text.
#[derive(Default)]
struct EventFields {
    name: CBuf<EVENT_NAME>,
    has_name: bool,
    value: Option<i64>,
    text: CBuf<EVENT_TEXT>,
    has_text: bool,
}

impl<const N: usize> Default for CBuf<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl EventFields {
    fn number(&mut self, field: &Field, value: Option<i64>, show: &dyn fmt::Display) {
        match value {
            Some(v) if self.value.is_none() => self.value = Some(v),
            // too large for the value, or not the first number: text
            None if !self.has_text && field.name() != "message" => {
                self.has_text = true;
                let _ = write!(self.text, "{show}");
            }
            _ => {}
        }
    }
}

impl Visit for EventFields {
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.number(field, Some(value), &value);
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.number(field, i64::try_from(value).ok(), &value);
    }

    fn record_i128(&mut self, field: &Field, value: i128) {
        self.number(field, i64::try_from(value).ok(), &value);
    }

    fn record_u128(&mut self, field: &Field, value: u128) {
        self.number(field, i64::try_from(value).ok(), &value);
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            if !self.has_name {
                self.has_name = true;
                self.name.push_str(value);
            }
        } else if !self.has_text {
            self.has_text = true;
            self.text.push_str(value);
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if field.name() == "message" {
            if !self.has_name {
                self.has_name = true;
                let _ = write!(self.name, "{value:?}");
            }
        } else if !self.has_text {
            self.has_text = true;
            let _ = write!(self.text, "{value:?}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{CBuf, D9Layer};
    use crate::tests::{gate_lock, Attached, Rec};
    use std::fmt;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tracing_subscriber::prelude::*;

    /// Counts its formatting: whether the layer formatted a field.
    struct Counted<'a>(&'a AtomicUsize);
    impl fmt::Debug for Counted<'_> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            self.0.fetch_add(1, Ordering::SeqCst);
            f.write_str("counted")
        }
    }

    /// Spans with fields, a child, a root, a late field, an event: what
    /// the tests below run, with `formatted` counting the Debug field.
    fn workload(formatted: &AtomicUsize) -> (u64, u64, u64) {
        let req = ::tracing::info_span!(
            "request",
            route = "/slow",
            id = 42u64,
            big = ?Counted(formatted),
            neg = -7i64,
            fifth = 5u8,
            late = ::tracing::field::Empty,
        );
        req.record("late", 9u64);
        let ids;
        {
            let _e = req.enter();
            let child = ::tracing::info_span!("child");
            let root = ::tracing::info_span!(parent: None, "root");
            ::tracing::info!(n = 3u32, who = "me", "served {}", "it");
            ::tracing::info!(x = 1u8, why = ?Counted(formatted));
            ids = (
                req.id().unwrap().into_u64(),
                child.id().unwrap().into_u64(),
                root.id().unwrap().into_u64(),
            );
        }
        ids
    }

    /// The spans and events of the thread's records (its ring also holds
    /// the THREAD_START of its claim).
    fn spans_and_events(seg: &Attached) -> Vec<Rec> {
        let mut recs = seg.records();
        recs.retain(|r| !matches!(r, Rec::Other(_)));
        recs
    }

    fn subscriber() -> impl ::tracing::Subscriber + Send + Sync {
        tracing_subscriber::registry().with(D9Layer::new())
    }

    /// Detached, the layer neither records nor formats anything.
    #[test]
    fn detached_callbacks_do_nothing() {
        let _g = gate_lock();
        assert_eq!(crate::init(), Ok(()));
        assert!(!crate::gate_open());
        let formatted = AtomicUsize::new(0);
        ::tracing::subscriber::with_default(subscriber(), || workload(&formatted));
        assert_eq!(formatted.load(Ordering::SeqCst), 0);
        // and with the shim's segment attached, records appear (below);
        // detached, none of this thread's ring
        let mut seg = Attached::attach();
        seg.detach();
        ::tracing::subscriber::with_default(subscriber(), || workload(&formatted));
        assert_eq!(spans_and_events(&seg), vec![]);
        assert_eq!(formatted.load(Ordering::SeqCst), 0);
    }

    /// Attached (an in-process recorder on the shim's segment), every
    /// callback is its record on the calling thread's ring.
    #[test]
    fn attached_spans_and_events_are_records() {
        let _g = gate_lock();
        assert_eq!(crate::init(), Ok(()));
        let seg = Attached::attach();
        let formatted = AtomicUsize::new(0);
        let (req, child, root) =
            ::tracing::subscriber::with_default(subscriber(), || workload(&formatted));
        let recs = spans_and_events(&seg);
        drop(seg);
        let field = |key: &str, value: i64, text: &str| Rec::Field {
            span: req,
            key: key.into(),
            value,
            text: text.into(),
        };
        let target = module_path!().to_string();
        let want = vec![
            Rec::New {
                span: req,
                parent: 0,
                name: "request".into(),
            },
            field("target", 0, &target),
            // the first four fields; `fifth` and the empty `late` not
            field("route", 0, "/slow"),
            field("id", 42, ""),
            field("big", 0, "counted"),
            field("neg", -7, ""),
            // Span::record
            field("late", 9, ""),
            Rec::Enter(req),
            Rec::New {
                span: child,
                parent: req,
                name: "child".into(),
            },
            Rec::Field {
                span: child,
                key: "target".into(),
                value: 0,
                text: target.clone(),
            },
            Rec::New {
                span: root,
                parent: 0,
                name: "root".into(),
            },
            Rec::Field {
                span: root,
                key: "target".into(),
                value: 0,
                text: target.clone(),
            },
            Rec::Event {
                name: "served it".into(),
                value: 3,
                text: "me".into(),
            },
            // no message: the metadata's name; the second field as text
            Rec::Event {
                name: format!("event {}:", file!()),
                value: 1,
                text: "counted".into(),
            },
            Rec::Close(root),
            Rec::Close(child),
            Rec::Exit(req),
            Rec::Close(req),
        ];
        // the event's name ends in its line: compare up to it
        let recs: Vec<Rec> = recs
            .into_iter()
            .map(|r| match r {
                Rec::Event { name, value, text } if name.starts_with("event ") => Rec::Event {
                    name: name[..name.rfind(':').unwrap() + 1].to_string(),
                    value,
                    text,
                },
                r => r,
            })
            .collect();
        assert_eq!(recs, want);
        assert_eq!(formatted.load(Ordering::SeqCst), 2);
        assert!(root != child && child != req);
    }

    /// Names and texts are cut to what the shim keeps, on a character
    /// boundary; an interior NUL ends them.
    #[test]
    fn strings_are_cut_to_the_shims_limits() {
        let _g = gate_lock();
        assert_eq!(crate::init(), Ok(()));
        let seg = Attached::attach();
        let long = "é".repeat(60); // 120 bytes
        let id = ::tracing::subscriber::with_default(subscriber(), || {
            let s = ::tracing::info_span!(
                "a_span_name_longer_than_the_eighty_seven_bytes_the_shim_keeps_for_a_span_name_xxxxxxxxxxx",
                text = long.as_str(),
                nul = "a\0b",
            );
            ::tracing::info!(t = long.as_str(), "{}", long);
            s.id().unwrap().into_u64()
        });
        let recs = spans_and_events(&seg);
        drop(seg);
        let name = "a_span_name_longer_than_the_eighty_seven_bytes_the_shim_keeps_for_a_span_name_xxxxxxxxxxx";
        assert_eq!(
            recs[0],
            Rec::New {
                span: id,
                parent: 0,
                name: name[..87].into()
            }
        );
        let text = |r: &Rec| match r {
            Rec::Field { text, .. } => text.clone(),
            Rec::Event { name, text, .. } => format!("{name}|{text}"),
            r => panic!("{r:?}"),
        };
        assert_eq!(text(&recs[2]), "é".repeat(19)); // 38 of 39 bytes
        assert_eq!(text(&recs[3]), "a");
        assert_eq!(
            text(&recs[4]),
            format!("{}|{}", "é".repeat(23), "é".repeat(23))
        );
    }

    /// Behind a per-layer filter, a span or event the filter drops is not
    /// recorded, and a kept span's parent is its nearest kept ancestor.
    #[test]
    fn a_per_layer_filter_keeps_its_targets_only() {
        use tracing_subscriber::filter::{LevelFilter, Targets};
        let _g = gate_lock();
        assert_eq!(crate::init(), Ok(()));
        let seg = Attached::attach();
        let mine = Targets::new().with_target("d9prof", LevelFilter::INFO);
        let sub = tracing_subscriber::registry().with(D9Layer::new().with_filter(mine));
        let (outer, inner) = ::tracing::subscriber::with_default(sub, || {
            let outer = ::tracing::info_span!("outer");
            let _o = outer.enter();
            let lib = ::tracing::info_span!(target: "some_lib", "lib");
            let _l = lib.enter();
            let inner = ::tracing::info_span!("inner");
            ::tracing::info!(target: "some_lib", "not this one");
            ::tracing::debug!("nor this one");
            (outer.id().unwrap(), inner.id().unwrap())
        });
        let recs = spans_and_events(&seg);
        drop(seg);
        let news: Vec<(u64, u64, String)> = recs
            .iter()
            .filter_map(|r| match r {
                Rec::New { span, parent, name } => Some((*span, *parent, name.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(
            news,
            vec![
                (outer.into_u64(), 0, "outer".into()),
                (inner.into_u64(), outer.into_u64(), "inner".into()),
            ]
        );
        assert!(!recs.iter().any(|r| matches!(r, Rec::Event { .. })));
        // entered: outer only (lib is not recorded, inner never entered)
        let enters: Vec<&Rec> = recs
            .iter()
            .filter(|r| matches!(r, Rec::Enter(_) | Rec::Exit(_)))
            .collect();
        assert_eq!(
            enters,
            vec![&Rec::Enter(outer.into_u64()), &Rec::Exit(outer.into_u64())]
        );
    }

    #[test]
    fn a_buffer_stops_formatting_when_full() {
        let mut b = CBuf::<8>::new();
        assert!(std::fmt::write(&mut b, format_args!("{}", "abcdefghij")).is_err());
        assert_eq!(b.as_str(), "abcdefg");
        let b = CBuf::<4>::of("aé€");
        assert_eq!(b.as_str(), "aé");
    }
}
