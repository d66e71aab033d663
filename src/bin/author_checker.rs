//! The author page's checker: the lab file's parser and every check, in a
//! worker of its own (see src/author/checker.rs).

fn main() {
    clusterlab_web::author::checker::serve();
}
