//! Stalls: stretches of busy loop too long (`lag`), whether a stall's stack shows the code that
//! blocked (`blame`), who is told of a stall while it lasts (`listeners`), and the stack
//! sampler that interrupts the thread itself (`interrupt`).

pub mod blame;
#[cfg(not(test))]
pub mod interrupt;
pub mod lag;
pub mod listeners;
#[cfg(not(test))]
pub mod napi;
