//! A cuttable TCP proxy for the chaos tests: forwards each connection to a target until cut;
//! a cut closes every open connection and refuses new ones (accepted, then closed at once)
//! until healed, as a network partition that resets connections would.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::net::{TcpListener, TcpStream};
use tokio::task::AbortHandle;

pub(crate) struct CutProxy {
    pub addr: SocketAddr,
    target: Arc<Mutex<SocketAddr>>,
    cut: Arc<AtomicBool>,
    open: Arc<Mutex<Vec<AbortHandle>>>,
    accept: AbortHandle,
}

impl CutProxy {
    pub(crate) async fn start(target: SocketAddr) -> CutProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind the proxy");
        let addr = listener.local_addr().unwrap();
        let cut = Arc::new(AtomicBool::new(false));
        let open: Arc<Mutex<Vec<AbortHandle>>> = Arc::default();
        let target = Arc::new(Mutex::new(target));
        let (is_cut, conns, to) = (cut.clone(), open.clone(), target.clone());
        let accept = tokio::spawn(async move {
            loop {
                let Ok((mut client, _)) = listener.accept().await else { continue };
                if is_cut.load(Ordering::SeqCst) {
                    drop(client);
                    continue;
                }
                let target = *to.lock().unwrap();
                let task = tokio::spawn(async move {
                    if let Ok(mut server) = TcpStream::connect(target).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
                let mut conns = conns.lock().unwrap();
                conns.retain(|c| !c.is_finished());
                conns.push(task.abort_handle());
            }
        })
        .abort_handle();
        CutProxy { addr, target, cut, open, accept }
    }

    /// Sends later connections to `target` (one known only once the proxy's address is used).
    pub(crate) fn retarget(&self, target: SocketAddr) {
        *self.target.lock().unwrap() = target;
    }

    /// Closes every connection through the proxy and refuses new ones.
    pub(crate) fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
        for conn in self.open.lock().unwrap().drain(..) {
            conn.abort();
        }
    }

    pub(crate) fn heal(&self) {
        self.cut.store(false, Ordering::SeqCst);
    }
}

impl Drop for CutProxy {
    fn drop(&mut self) {
        self.accept.abort();
        self.cut();
    }
}
