//! V8's GC callbacks on a monitored thread, for the collections inside a stall and a window
//! (src/stalls/gc.rs) and the heap after them (src/runtime/heap_after_gc.rs). N-API has none,
//! and Node's 'gc' performance entries reach JS through a setImmediate the app's own async
//! hooks would see. Node exports V8's API for addons: it is looked up by name as a monitor
//! attaches. A C++ name spells the function's signature, so a V8 whose functions changed has no
//! symbol of that name, and a stall's and a window's GC, and the heap after GCs, are then
//! unknown, never misread. Not on Windows, whose names are another compiler's: unknown there.

use std::sync::Arc;

use crate::attribution::ledger::Ledger;
use super::shared::Shared;

#[cfg(unix)]
pub use unix::GcHooks;

#[cfg(unix)]
mod unix {
    use std::ffi::{c_int, c_void, CStr};
    use std::sync::OnceLock;

    use super::*;

    /// `void (*)(Isolate*, GCType, GCCallbackFlags, void* data)`
    type Callback = unsafe extern "C" fn(*mut c_void, c_int, c_int, *mut c_void);
    /// `Isolate::AddGC{Prologue,Epilogue}Callback(GCCallbackWithData, void* data, GCType filter)`
    type Add = unsafe extern "C" fn(*mut c_void, Callback, *mut c_void, c_int);
    /// `Isolate::RemoveGC{Prologue,Epilogue}Callback(GCCallbackWithData, void* data)`
    type Remove = unsafe extern "C" fn(*mut c_void, Callback, *mut c_void);

    struct Api {
        current: unsafe extern "C" fn() -> *mut c_void,
        /// `Isolate::GetHeapStatistics(HeapStatistics*)`; without it the heap after GCs is unknown.
        heap_statistics: Option<unsafe extern "C" fn(*mut c_void, *mut usize)>,
        add_prologue: Add,
        add_epilogue: Add,
        remove_prologue: Remove,
        remove_epilogue: Remove,
    }

    /// `kGCTypeAll`.
    const ALL: c_int = 31;

    /// # Safety
    /// `F` is the function pointer type of the export `name`.
    unsafe fn find<F: Copy>(name: &CStr) -> Option<F> {
        let f = libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr());
        (!f.is_null()).then(|| std::mem::transmute_copy(&f))
    }

    fn api() -> Option<&'static Api> {
        static API: OnceLock<Option<Api>> = OnceLock::new();
        API.get_or_init(|| unsafe {
            Some(Api {
                current: find(c"_ZN2v87Isolate10GetCurrentEv")?,
                heap_statistics: find(c"_ZN2v87Isolate17GetHeapStatisticsEPNS_14HeapStatisticsE"),
                add_prologue: find(c"_ZN2v87Isolate21AddGCPrologueCallbackEPFvPS0_NS_6GCTypeENS_15GCCallbackFlagsEPvES4_S2_")?,
                add_epilogue: find(c"_ZN2v87Isolate21AddGCEpilogueCallbackEPFvPS0_NS_6GCTypeENS_15GCCallbackFlagsEPvES4_S2_")?,
                remove_prologue: find(c"_ZN2v87Isolate24RemoveGCPrologueCallbackEPFvPS0_NS_6GCTypeENS_15GCCallbackFlagsEPvES4_")?,
                remove_epilogue: find(c"_ZN2v87Isolate24RemoveGCEpilogueCallbackEPFvPS0_NS_6GCTypeENS_15GCCallbackFlagsEPvES4_")?,
            })
        })
        .as_ref()
    }

    /// What the callbacks read: the thread's state and a view of its ledger (for the stretch running).
    struct Data {
        shared: Arc<Shared>,
        ledger: Ledger,
    }

    unsafe extern "C" fn prologue(_isolate: *mut c_void, v8_type: c_int, _flags: c_int, data: *mut c_void) {
        let d = &*(data as *const Data);
        // A panic must not unwind into V8.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| d.shared.gc_record.begin(v8_type, d.shared.clock.now())));
    }

    unsafe extern "C" fn epilogue(isolate: *mut c_void, v8_type: c_int, _flags: c_int, data: *mut c_void) {
        let d = &*(data as *const Data);
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let stretch = d.ledger.running().map(|_| d.ledger.wake());
            d.shared.gc_record.end(stretch, d.shared.clock.now());
            if let Some(used) = heap_used(isolate) {
                d.shared.heap_after_gc.record(v8_type, used);
            }
        }));
    }

    /// `HeapStatistics` is a C++ class of size_t fields, `used_heap_size_` the fifth since V8 has
    /// had it; the buffer is larger than the class has ever been.
    const USED_HEAP_SIZE: usize = 4;

    unsafe fn heap_used(isolate: *mut c_void) -> Option<u64> {
        let read = api()?.heap_statistics?;
        let mut stats = [0usize; 64];
        read(isolate, stats.as_mut_ptr());
        Some(stats[USED_HEAP_SIZE] as u64)
    }

    /// The callbacks installed on one thread's isolate, until `remove`.
    pub struct GcHooks {
        isolate: *mut c_void,
        data: *mut Data,
    }

    impl GcHooks {
        /// Installs the callbacks on the calling thread's isolate; `None` where V8's API is not found.
        ///
        /// # Safety
        /// Call on the monitored thread; `ledger` views memory that stays valid until `remove`.
        pub unsafe fn install(shared: Arc<Shared>, ledger: Ledger) -> Option<GcHooks> {
            let api = api()?;
            let isolate = (api.current)();
            if isolate.is_null() {
                return None;
            }
            shared.gc_record.set_hooked(true);
            shared.heap_after_gc.set_hooked(api.heap_statistics.is_some());
            let data = Box::into_raw(Box::new(Data { shared, ledger }));
            (api.add_prologue)(isolate, prologue, data.cast(), ALL);
            (api.add_epilogue)(isolate, epilogue, data.cast(), ALL);
            Some(GcHooks { isolate, data })
        }

        /// Removes the callbacks; after this the ledger view is never read.
        ///
        /// # Safety
        /// Call on the thread that installed them, its isolate still alive.
        pub unsafe fn remove(self) {
            if let Some(api) = api() {
                (api.remove_prologue)(self.isolate, prologue, self.data.cast());
                (api.remove_epilogue)(self.isolate, epilogue, self.data.cast());
            }
            let data = Box::from_raw(self.data);
            data.shared.gc_record.set_hooked(false);
            data.shared.heap_after_gc.set_hooked(false);
        }
    }
}

/// No V8 names to look up: a stall's and a window's GC are unknown.
#[cfg(not(unix))]
pub struct GcHooks;

#[cfg(not(unix))]
impl GcHooks {
    /// # Safety
    /// As on unix.
    pub unsafe fn install(_shared: Arc<Shared>, _ledger: Ledger) -> Option<GcHooks> {
        None
    }

    /// # Safety
    /// As on unix.
    pub unsafe fn remove(self) {}
}
