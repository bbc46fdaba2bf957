//! Key slots: the ring of ledger slots after the scopes', each bound to one (scope, key) at a
//! time and rebound when the ring comes round, a key moved to another scope as it runs; what a
//! slot is charged to now.

use std::sync::Arc;

use smol_str::SmolStr;

use super::{add, delta, Aggregator, KeyOwner, Ledger, Reading, RLOOP, UNATTRIBUTED};

impl Aggregator {
    /// Binds key slot `slot` to (`scope`, `key`), retiring what its previous key was charged
    /// in this window. Called by the monitored thread (the ledger's one writer) while that slot
    /// is not running: its reading is then complete without a clock read.
    pub fn bind_key(&mut self, ledger: &Ledger, slot: usize, scope: usize, key: SmolStr) -> Result<(), String> {
        let j = slot
            .checked_sub(self.cfg.key_base())
            .filter(|&j| j < self.cfg.key_slots)
            .ok_or_else(|| format!("slot {slot} is not a key slot"))?;
        if scope >= self.scopes() {
            return Err(format!("scope {scope} is not registered"));
        }
        if ledger.running().is_some_and(|(s, _)| s == slot) {
            return Err(format!("slot {slot} is being charged"));
        }
        let reading = ledger.read(slot, None, 0.0);
        if self.key_owner.len() <= j {
            self.key_owner.resize_with(j + 1, || None);
        }
        if let Some(old) = self.key_owner[j].take() {
            let d = delta(reading, self.base.get(slot));
            let per_scope = &mut self.retired.per_scope;
            if per_scope.len() <= old.scope {
                per_scope.resize(old.scope + 1, Reading::default());
            }
            add(&mut per_scope[old.scope], d);
            if d.busy_ms > 0.0 {
                if self.retired.keys.len() < self.cfg.max_keys {
                    self.retired.keys.push((old.scope, old.key, d.busy_ms));
                } else {
                    self.retired.unnamed.entry(old.scope).or_default().record(d.busy_ms);
                }
            }
        }
        self.base.set(slot, reading);
        self.key_owner[j] = Some(KeyOwner { scope, key });
        self.active.touch(slot, self.seq + 1);
        Ok(())
    }

    /// Moves the key bound to key slot `slot` to `scope`, with what it was charged in the
    /// current window so far (what earlier windows hold stays theirs): a request whose route
    /// became known after it began. The slot may be the one charged now: its running interval
    /// goes with the key.
    pub fn rescope_key(&mut self, slot: usize, scope: usize) -> Result<(), String> {
        if scope >= self.scopes() {
            return Err(format!("scope {scope} is not registered"));
        }
        let owner = slot
            .checked_sub(self.cfg.key_base())
            .and_then(|j| self.key_owner.get_mut(j)?.as_mut())
            .ok_or_else(|| format!("slot {slot} is no bound key slot"))?;
        owner.scope = scope;
        Ok(())
    }

    /// The scope a slot is charged to now; rloop's own work is in none (unattributed).
    pub fn scope_of(&self, slot: usize) -> usize {
        match slot.checked_sub(self.cfg.key_base()).and_then(|j| self.key_owner.get(j)) {
            Some(owner) => owner.as_ref().map_or(UNATTRIBUTED, |o| o.scope),
            None if slot < self.scopes() && slot != RLOOP => slot,
            None => UNATTRIBUTED,
        }
    }

    /// The scope name and key a slot is charged to now.
    pub fn describe_slot(&self, slot: usize) -> (Arc<str>, Option<&str>) {
        let key = slot.checked_sub(self.cfg.key_base()).and_then(|j| self.key_owner.get(j)?.as_ref()).map(|o| &*o.key);
        (self.names.get(self.scope_of(slot)), key)
    }
}
