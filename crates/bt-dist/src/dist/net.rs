//! The one module that names tokio: the async I/O, timers, channels
//! and runtime types the distribution layer uses, under local names, and the adapter that
//! gives `erl_dist` (written against futures-io) a tokio stream.

pub use tokio::io::unix::AsyncFd;
pub use tokio::io::Interest;
pub use tokio::io::{
    empty, split, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader, ReadBuf, ReadHalf,
    WriteHalf,
};
pub use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
pub use tokio::net::{lookup_host, TcpListener, TcpStream};
pub use tokio::runtime::{Builder as RuntimeBuilder, Handle, Runtime};
pub use tokio::sync::{
    mpsc, oneshot, watch, Mutex as AsyncMutex, Notify, OwnedSemaphorePermit, Semaphore,
};
pub use tokio::task::AbortHandle;
pub use tokio::time::{interval, sleep, sleep_until, timeout, Instant};
pub use tokio::{select, spawn};
pub use tokio_util::compat::{Compat, FuturesAsyncReadCompatExt, TokioAsyncReadCompatExt};

/// A single-threaded runtime with I/O and timers (tests, tools, `bt epmd`).
pub fn current_thread() -> std::io::Result<Runtime> {
    RuntimeBuilder::new_current_thread().enable_all().build()
}
