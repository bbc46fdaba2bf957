//! Stalls: stretches of busy loop too long (`lag`), whether a stall's stack shows the code that
//! blocked (`blame`), and who is told of a stall while it lasts (`listeners`).

pub mod blame;
pub mod lag;
pub mod listeners;
#[cfg(not(test))]
pub mod napi;
