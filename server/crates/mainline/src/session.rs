//! A sequence of writes to `dynamic_events`, as to one kernel: each line is parsed with
//! the events earlier lines defined ([`crate::registry`]) and, when accepted, changes them.

use crate::ast::Line;
use crate::dialect::Dialect;
use crate::env::Env;
use crate::registry::Registry;
use crate::{parse, Rejection};

/// Writes, one after another, as to one kernel's `dynamic_events`.
pub struct Session<'a> {
    dialect: &'a Dialect,
    env: &'a dyn Env,
    registry: Registry,
}

impl std::fmt::Debug for Session<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").field("dialect", &self.dialect.version).field("registry", &self.registry).finish()
    }
}

impl<'a> Session<'a> {
    pub fn new(dialect: &'a Dialect, env: &'a dyn Env) -> Session<'a> {
        Session { dialect, env, registry: Registry::default() }
    }

    /// Write one line; an accepted definition or removal changes the state.
    pub fn write(&mut self, text: &str) -> Result<Line, Rejection> {
        let r = parse::run_command(self.dialect, self.env, Some(&self.registry), text);
        match &r {
            Ok(Line::Probe(p)) => self.registry.add(p),
            Ok(Line::Remove(rm)) if !self.registry.remove(rm.group.as_deref(), &rm.event) => {
                return Err(Rejection::Silent { errno: crate::Errno::Enoent, why: "no such event to remove" });
            }
            _ => {}
        }
        r
    }
}
