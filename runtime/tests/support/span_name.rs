//! The `name` field a new span was created with, for the span tests'
//! subscribers.

/// `span`'s `name` field, if it has one recorded as a string.
pub fn span_name(span: &tracing::span::Attributes<'_>) -> Option<String> {
    struct Visit<'a>(&'a mut Option<String>);
    impl tracing::field::Visit for Visit<'_> {
        fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
            if field.name() == "name" {
                *self.0 = Some(value.to_owned());
            }
        }
        fn record_debug(&mut self, _: &tracing::field::Field, _: &dyn std::fmt::Debug) {}
    }
    let mut name = None;
    span.record(&mut Visit(&mut name));
    name
}
