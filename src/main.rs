fn main() {
    yew::Renderer::<clusterlab_web::App>::new().render();
}
