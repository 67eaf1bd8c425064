//! stub
#[cfg(test)]
mod tests {
    #[test]
    fn scratch() {
        for f in ["sample-facture-v04.pdf", "sample-bulletin-v03-montant-different.pdf", "sample-avis-impot-v04-rfr-modifie.pdf"] {
            let p = format!("{}/../../shared/data/samples/administratif/{f}", env!("CARGO_MANIFEST_DIR"));
            let doc = lopdf::Document::load(&p).unwrap();
            println!("==== {f}\n{:?}", doc.extract_text(&[1]));
        }
    }
}
