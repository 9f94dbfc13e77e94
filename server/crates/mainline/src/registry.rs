//! A sequence of writes to `dynamic_events`: lines build on one another. An event
//! defined earlier makes a later definition of the same GROUP/EVENT an append (one
//! event, several probe points) or an error (`DIFF_PROBE_TYPE`, `DIFF_ARG_TYPE`,
//! `SAME_PROBE`, `EVENT_EXIST`); a tracepoint takes one tprobe (`-EEXIST`); `-:` lines
//! remove events. This is what `register_trace_kprobe` / `register_trace_fprobe` and
//! `trace_probe_compare_arg_type` decide, with no kernel needed.

use crate::ast::{Place, Probe, ProbeKind};

/// What blocks a registration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Conflict {
    EventExist,
    DiffProbeType,
    /// 1-based index of the first argument that differs.
    DiffArgType(usize),
    SameProbe,
    TracepointBusy,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Point {
    place: String,
    offset: u64,
    comms: Vec<String>,
}

#[derive(Debug, Clone)]
struct Event {
    group: String,
    event: String,
    /// kprobe family (`p`/`r`) or fprobe family (`f`/`t`).
    kprobe: bool,
    is_return: bool,
    is_tracepoint: bool,
    /// (name, store type, array count) of each argument.
    args: Vec<(String, String, u32)>,
    points: Vec<Point>,
}

/// The events earlier lines defined.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    events: Vec<Event>,
    tracepoints: Vec<String>,
}

fn point_of(p: &Probe) -> Point {
    let (place, offset) = match &p.place {
        Place::Symbol { module, name, offset, .. } => (
            match module {
                Some(m) => format!("{m}:{name}"),
                None => name.clone(),
            },
            *offset,
        ),
        Place::Address { addr, .. } => (format!("0x{addr:x}"), 0),
    };
    Point { place, offset, comms: p.args.iter().map(|a| a.text.clone()).collect() }
}

fn signature(p: &Probe) -> Vec<(String, String, u32)> {
    p.args
        .iter()
        .map(|a| (a.name.clone(), a.store_type.clone(), a.ty.as_ref().and_then(|t| t.array).unwrap_or(0)))
        .collect()
}

impl Registry {
    pub(crate) fn conflict(&self, p: &Probe) -> Option<Conflict> {
        let kprobe = matches!(p.kind, ProbeKind::Kprobe | ProbeKind::Kretprobe);
        let old = self.events.iter().find(|e| e.group == p.group && e.event == p.event);
        if let Some(old) = old {
            if old.kprobe != kprobe {
                return Some(Conflict::EventExist);
            }
            let tracepoint = p.kind == ProbeKind::Tprobe;
            if old.is_return != p.kind.is_return() || (!kprobe && old.is_tracepoint != tracepoint) {
                return Some(Conflict::DiffProbeType);
            }
            // trace_probe_compare_arg_type
            let a = signature(p);
            let b = &old.args;
            if a.len() != b.len() {
                return Some(Conflict::DiffArgType(a.len().min(b.len()) + 1));
            }
            if let Some(i) = a.iter().zip(b).position(|(x, y)| x != y) {
                return Some(Conflict::DiffArgType(i + 1));
            }
            let point = point_of(p);
            if old.points.contains(&point) {
                return Some(Conflict::SameProbe);
            }
        }
        // tracepoint_probe_register(tp, probestub, NULL) refuses a second probe; a stub
        // registers nothing.
        if p.kind == ProbeKind::Tprobe && !p.tracepoint_stub {
            if let Place::Symbol { name, .. } = &p.place {
                if self.tracepoints.contains(name) {
                    return Some(Conflict::TracepointBusy);
                }
            }
        }
        None
    }

    pub(crate) fn add(&mut self, p: &Probe) {
        if p.kind == ProbeKind::Tprobe && !p.tracepoint_stub {
            if let Place::Symbol { name, .. } = &p.place {
                self.tracepoints.push(name.clone());
            }
        }
        let point = point_of(p);
        if let Some(old) = self.events.iter_mut().find(|e| e.group == p.group && e.event == p.event) {
            old.points.push(point);
            return;
        }
        self.events.push(Event {
            group: p.group.clone(),
            event: p.event.clone(),
            kprobe: matches!(p.kind, ProbeKind::Kprobe | ProbeKind::Kretprobe),
            is_return: p.kind.is_return(),
            is_tracepoint: p.kind == ProbeKind::Tprobe,
            args: signature(p),
            points: vec![point],
        });
    }

    /// `-:[GROUP/]EVENT`: removes every matching event (group any when not written).
    pub(crate) fn remove(&mut self, group: Option<&str>, event: &str) -> bool {
        let before = self.events.len();
        let mut freed: Vec<String> = Vec::new();
        self.events.retain(|e| {
            let hit = group.is_none_or(|g| g == e.group) && (event.is_empty() || e.event == event);
            if hit && e.is_tracepoint {
                freed.extend(e.points.iter().map(|p| p.place.clone()));
            }
            !hit
        });
        self.tracepoints.retain(|t| !freed.contains(t));
        self.events.len() != before
    }
}
