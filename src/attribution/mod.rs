//! Busy time charged to scopes and summed over windows: the ledger the JS hooks write
//! (`ledger`), the windows made of it (`aggregator`, `window`), and what they need to stay
//! cheap at any number of scopes and keys (`slots`, `names`, `keys`); the CPU each scope got of its busy
//! time (`scope_cpu`).

pub mod aggregator;
pub mod keys;
pub mod ledger;
#[cfg(not(test))]
pub mod napi;
pub mod names;
pub mod scope_cpu;
pub mod slots;
pub mod window;
