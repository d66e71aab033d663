//! The author module's pages, from the URL hash.

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuthorRoute {
    /// `#/author`: a new lab, from the starter.
    New,
    /// `#/author/KEY`: a lab from "My labs".
    Edit(String),
    /// `#/shared/DATA`: a lab from a share link.
    Shared(String),
    /// `#/author/reference[/SECTION]`: the lab file's reference.
    Reference(Option<String>),
    /// `#/author/room`: an instructor's room link.
    Room,
}

impl AuthorRoute {
    pub fn from_hash(hash: &str) -> AuthorRoute {
        let path = hash.trim_start_matches('#');
        if let Some(data) = path.strip_prefix("/shared/") {
            return AuthorRoute::Shared(data.to_string());
        }
        if let Some(rest) = path.strip_prefix("/author/reference") {
            if rest.is_empty() || rest.starts_with('/') {
                let section = rest.trim_start_matches('/');
                return AuthorRoute::Reference((!section.is_empty()).then(|| section.to_string()));
            }
        }
        if path == "/author/room" {
            return AuthorRoute::Room;
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

#[cfg(test)]
mod tests {
    use super::AuthorRoute;

    #[test]
    fn routes_from_the_address() {
        assert_eq!(AuthorRoute::from_hash("#/author"), AuthorRoute::New);
        assert_eq!(AuthorRoute::from_hash("#/author/lab-m3x1"), AuthorRoute::Edit("lab-m3x1".into()));
        assert_eq!(AuthorRoute::from_hash("#/shared/abc"), AuthorRoute::Shared("abc".into()));
        assert_eq!(AuthorRoute::from_hash("#/author/reference"), AuthorRoute::Reference(None));
        assert_eq!(AuthorRoute::from_hash("#/author/reference/faults"), AuthorRoute::Reference(Some("faults".into())));
        // A saved lab's key never starts so (they are `lab-…`), but one that
        // merely begins with the word is a key.
        assert_eq!(AuthorRoute::from_hash("#/author/room"), AuthorRoute::Room);
        assert_eq!(AuthorRoute::from_hash("#/author/referenced"), AuthorRoute::Edit("referenced".into()));
    }
}
