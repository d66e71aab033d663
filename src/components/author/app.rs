//! The author module's root: the editor or a shared lab, as the hash says,
//! over an engine worker of its own for the preview.

use std::rc::Rc;

use gloo::events::EventListener;
use yew::prelude::*;

use crate::author::route::AuthorRoute;
use crate::components::author::editor_page::EditorPage;
use crate::components::author::reference_page::ReferencePage;
use crate::components::author::room_page::RoomPage;
use crate::components::author::shared_lab::SharedLab;
use crate::engine::Engine;

#[function_component(AuthorApp)]
pub fn author_app() -> Html {
    let route = use_state(AuthorRoute::current);
    {
        let route = route.clone();
        use_effect_with((), move |_| {
            let listener = EventListener::new(&gloo::utils::window(), "hashchange", move |_| route.set(AuthorRoute::current()));
            move || drop(listener)
        });
    }
    let engine = use_memo((), |_| Engine::start());
    let page = match &*route {
        AuthorRoute::New => html! { <EditorPage key="new" saved_key={None::<String>} /> },
        AuthorRoute::Edit(key) => html! { <EditorPage key={key.clone()} saved_key={Some(key.clone())} /> },
        AuthorRoute::Shared(data) => html! { <SharedLab key={data.clone()} data={data.clone()} /> },
        AuthorRoute::Reference(section) => html! { <ReferencePage section={section.clone()} /> },
        AuthorRoute::Room => html! { <RoomPage /> },
    };
    html! {
        <ContextProvider<Rc<Engine>> context={engine}>{ page }</ContextProvider<Rc<Engine>>>
    }
}
