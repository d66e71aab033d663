//! The results module: the review page and its downloads (see src/results/).

fn main() {
    clusterlab_web::results::start();
}
