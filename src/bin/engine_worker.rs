//! The engine worker: the simulator in its own thread and module, built by
//! Trunk as a worker beside the page's module (see engine.rs).

fn main() {
    clusterlab_web::worker::serve();
}
