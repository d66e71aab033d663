//! A file the page hands to the browser's downloads: the author page's lab
//! file, the review page's evidence bundle and results.

use wasm_bindgen::JsCast;

/// Downloads `text` as a file called `name`, of type `mime`.
pub fn download(name: &str, mime: &str, text: &str) -> Result<(), wasm_bindgen::JsValue> {
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&js_sys::Array::of1(&text.into()), &options)?;
    let url = web_sys::Url::create_object_url_with_blob(&blob)?;
    let anchor: web_sys::HtmlAnchorElement = gloo::utils::document().create_element("a")?.unchecked_into();
    anchor.set_href(&url);
    anchor.set_download(name);
    anchor.click();
    web_sys::Url::revoke_object_url(&url)
}
