//! Stalls: stretches of busy loop too long (`lag`) and their events (`event`), whether a stall's
//! stack shows the code that blocked (`blame`), who is told of a stall while it lasts
//! (`listeners`), the stack sampler that interrupts the thread itself (`interrupt`), and what
//! else took its time: how much of it the thread ran (`ran`), and its garbage collections (`gc`).

pub mod blame;
pub mod event;
pub mod gc;
#[cfg(not(test))]
pub mod interrupt;
pub mod lag;
pub mod listeners;
#[cfg(not(test))]
pub mod napi;
pub mod ran;
