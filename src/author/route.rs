//! The author module's pages, from the URL hash.

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuthorRoute {
    /// `#/author`: a new lab, from the starter.
    New,
    /// `#/author/KEY`: a lab from "My labs".
    Edit(String),
    /// `#/shared/DATA`: a lab from a share link.
    Shared(String),
}

impl AuthorRoute {
    pub fn from_hash(hash: &str) -> AuthorRoute {
        let path = hash.trim_start_matches('#');
        if let Some(data) = path.strip_prefix("/shared/") {
            return AuthorRoute::Shared(data.to_string());
        }
        match path.strip_prefix("/author/") {
            Some(key) if !key.is_empty() => AuthorRoute::Edit(key.to_string()),
            _ => AuthorRoute::New,
        }
    }

    pub fn current() -> AuthorRoute {
        AuthorRoute::from_hash(&gloo::utils::window().location().hash().unwrap_or_default())
    }
}
