fn main() {
    // Into `#app`: the author module renders beside it, never inside this app's tree.
    match gloo::utils::document().get_element_by_id("app") {
        Some(root) => yew::Renderer::<clusterlab_web::App>::with_root(root).render(),
        None => yew::Renderer::<clusterlab_web::App>::new().render(),
    };
}
