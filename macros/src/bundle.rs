//! `#[derive(Bundle)]`: a struct whose fields are spawned, inserted and
//! removed together.
//!
//! Every `Send + Sync + 'static` type is a component in sluice (a blanket
//! impl), so a struct field cannot tell by its type whether it is one
//! component or a bundle of several: a tuple `(A, B)` is itself a
//! component. A field is therefore one component unless it is marked
//! `#[bundle]`, which makes it a nested bundle whose components join the
//! outer one's, in place, in field order.
//!
//! Pipeline as for the node macros: parse the item, validate it (a struct,
//! `#[bundle]` without arguments, no component type spelled twice), then
//! expand, or emit every error spanned on its offending token.
//!
//! ```
//! # use sluice::Bundle;
//! # struct Pos(f32);
//! # struct Vel(f32);
//! # #[derive(Bundle)]
//! # struct Body { vel: Vel }
//! #[derive(Bundle)]
//! struct Unit { pos: Pos, #[bundle] body: Body }
//! ```
//!
//! becomes
//!
//! ```text
//! unsafe impl ::sluice::Bundle for Unit where Pos: ::sluice::Component, Body: ::sluice::Bundle {
//!     fn register(components: &mut Components, ids: &mut Vec<ComponentId>) {
//!         ids.push(components.register::<Pos>());
//!         <Body as ::sluice::Bundle>::register(components, ids);
//!     }
//!     unsafe fn write(self, mut dest: impl FnMut(usize) -> *mut u8) {
//!         let mut next = 0usize;
//!         let mut field = move || { let at = dest(next); next += 1; at };
//!         unsafe {
//!             field().cast::<Pos>().write(self.pos);
//!             <Body as ::sluice::Bundle>::write(self.body, |_| field());
//!         }
//!     }
//!     unsafe fn take(mut read: impl FnMut(usize) -> *mut u8) -> Self { /* the same walk */ }
//! }
//! ```
//!
//! A nested bundle's `write` and `take` call their callback once per field
//! in field order (the `Bundle` contract), so one running counter numbers
//! the outer bundle's fields, nested ones included.

use std::collections::HashMap;

use proc_macro2::TokenStream;
use quote::{ToTokens, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, Index, Meta, Type};

/// One field: how it is named in `self.<member>`, its type, and whether it
/// is a nested bundle.
struct Field {
    member: syn::Member,
    ty: Type,
    nested: bool,
}

/// The whole pipeline for one `#[derive(Bundle)]`.
pub(crate) fn derive(input: TokenStream) -> TokenStream {
    let input: DeriveInput = match syn::parse2(input) {
        Ok(input) => input,
        Err(error) => return error.to_compile_error(),
    };
    match fields(&input) {
        Ok(fields) => expand(&input, &fields),
        Err(errors) => errors.into_iter().map(|e| e.to_compile_error()).collect(),
    }
}

/// Parses and validates the fields, or every error found.
fn fields(input: &DeriveInput) -> Result<Vec<Field>, Vec<syn::Error>> {
    let data = match &input.data {
        Data::Struct(data) => data,
        Data::Enum(data) => {
            return Err(vec![syn::Error::new(
                data.enum_token.span,
                "#[derive(Bundle)] goes on a struct: an enum's variants cannot all be \
                 components of one entity",
            )]);
        }
        Data::Union(data) => {
            return Err(vec![syn::Error::new(
                data.union_token.span,
                "#[derive(Bundle)] goes on a struct, not a union",
            )]);
        }
    };
    let raw: Vec<&syn::Field> = match &data.fields {
        Fields::Named(named) => named.named.iter().collect(),
        Fields::Unnamed(unnamed) => unnamed.unnamed.iter().collect(),
        Fields::Unit => Vec::new(),
    };
    let mut errors = Vec::new();
    let mut fields = Vec::with_capacity(raw.len());
    // A component type spelled twice is refused here; spelled differently
    // (a path, an alias) or inside a nested bundle, only the runtime sees
    // it is one type (EntityError::DuplicateComponent, naming it).
    let mut seen: HashMap<String, &Type> = HashMap::new();
    for (index, field) in raw.into_iter().enumerate() {
        let mut nested = false;
        for attr in field.attrs.iter().filter(|a| a.path().is_ident("bundle")) {
            match &attr.meta {
                Meta::Path(_) if !nested => nested = true,
                Meta::Path(path) => errors.push(syn::Error::new_spanned(
                    path,
                    "`#[bundle]` is given twice on this field",
                )),
                Meta::List(list) => errors.push(syn::Error::new_spanned(
                    &list.tokens,
                    "`#[bundle]` takes no arguments: it marks a field as a nested bundle",
                )),
                Meta::NameValue(name_value) => errors.push(syn::Error::new_spanned(
                    &name_value.value,
                    "`#[bundle]` takes no value: it marks a field as a nested bundle",
                )),
            }
        }
        if !nested {
            let spelled = field.ty.to_token_stream().to_string();
            if let Some(first) = seen.get(&spelled) {
                let mut error = syn::Error::new_spanned(
                    &field.ty,
                    format!(
                        "this bundle names component `{spelled}` twice: an entity holds one \
                         value per component type"
                    ),
                );
                error.combine(syn::Error::new_spanned(first, "first named here"));
                errors.push(error);
            } else {
                seen.insert(spelled, &field.ty);
            }
        }
        let member = match &field.ident {
            Some(ident) => syn::Member::Named(ident.clone()),
            None => syn::Member::Unnamed(Index {
                index: u32::try_from(index).expect("fewer than 2^32 fields"),
                span: field.ty.span(),
            }),
        };
        fields.push(Field {
            member,
            ty: field.ty.clone(),
            nested,
        });
    }
    if errors.is_empty() {
        Ok(fields)
    } else {
        Err(errors)
    }
}

/// The `unsafe impl ::sluice::Bundle`.
fn expand(input: &DeriveInput, fields: &[Field]) -> TokenStream {
    let name = &input.ident;
    let (impl_generics, type_generics, where_clause) = input.generics.split_for_impl();
    let mut predicates: Vec<TokenStream> = where_clause
        .map(|w| w.predicates.iter().map(ToTokens::to_token_stream).collect())
        .unwrap_or_default();
    let mut register = Vec::new();
    let mut write = Vec::new();
    let mut take = Vec::new();
    for Field { member, ty, nested } in fields {
        let span = ty.span();
        if *nested {
            predicates.push(quote_spanned!(span=> #ty: ::sluice::Bundle));
            register.push(quote!(<#ty as ::sluice::Bundle>::register(components, ids);));
            write.push(quote!(<#ty as ::sluice::Bundle>::write(self.#member, |_| field());));
            take.push(quote!(#member: <#ty as ::sluice::Bundle>::take(|_| field()),));
        } else {
            predicates.push(quote_spanned!(span=> #ty: ::sluice::Component));
            register.push(quote!(ids.push(components.register::<#ty>());));
            write.push(quote!(field().cast::<#ty>().write(self.#member);));
            take.push(quote!(#member: field().cast::<#ty>().read(),));
        }
    }
    quote! {
        // SAFETY: `register`, `write` and `take` walk the same fields in
        // the same order (a nested bundle's own fields in its order, the
        // `Bundle` contract). `field()` hands out the callback's pointers
        // numbered 0, 1, .. in that walk, so field `i` of the flattened
        // list gets `dest(i)` / `read(i)`: `write` moves each value once to
        // its pointer, `take` reads each once from a pointer to its type.
        #[automatically_derived]
        unsafe impl #impl_generics ::sluice::Bundle for #name #type_generics
        where #(#predicates,)*
        {
            fn register(
                components: &mut ::sluice::entity::Components,
                ids: &mut ::std::vec::Vec<::sluice::entity::ComponentId>,
            ) {
                #(#register)*
            }

            #[inline]
            #[allow(unused_mut, unused_variables, unused_assignments, unused_unsafe)]
            unsafe fn write(self, mut dest: impl ::core::ops::FnMut(usize) -> *mut u8) {
                let mut next = 0usize;
                let mut field = move || {
                    let at = dest(next);
                    next += 1;
                    at
                };
                // SAFETY: the caller's contract: `dest(i)` is valid and
                // aligned for a write of field `i`'s type.
                unsafe { #(#write)* }
            }

            #[inline]
            #[allow(unused_mut, unused_variables, unused_assignments, unused_unsafe)]
            unsafe fn take(mut read: impl ::core::ops::FnMut(usize) -> *mut u8) -> Self {
                let mut next = 0usize;
                let mut field = move || {
                    let at = read(next);
                    next += 1;
                    at
                };
                // SAFETY: the caller's contract: `read(i)` points to a
                // valid, aligned value of field `i`'s type that we now own.
                unsafe { Self { #(#take)* } }
            }
        }
    }
}
