//! The author module: the author page and labs from share links, in the
//! page (see src/author/). Its checks run in `author_checker`.

fn main() {
    clusterlab_web::author::start();
}
