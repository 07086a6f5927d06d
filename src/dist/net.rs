//! The one module that names tokio (STYLE.md "Runtime"): the async I/O, timers, channels
//! and runtime types the distribution layer uses, under local names.

pub use tokio::io::{duplex, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
pub use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
pub use tokio::net::{lookup_host, TcpListener, TcpStream};
pub use tokio::runtime::{Builder as RuntimeBuilder, Handle, Runtime};
pub use tokio::spawn;
pub use tokio::sync::{mpsc, oneshot, Mutex as AsyncMutex};
pub use tokio::time::{sleep, timeout};

/// A single-threaded runtime with I/O and timers (tests, tools).
pub fn current_thread() -> std::io::Result<Runtime> {
    RuntimeBuilder::new_current_thread().enable_all().build()
}
