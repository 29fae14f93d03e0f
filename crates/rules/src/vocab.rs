//! [`vocabulary!`](crate::vocabulary): the one way a closed vocabulary (a fieldless enum
//! whose values are listed, counted or spelled somewhere) is declared in the workspace, in
//! the rules crate and the engine alike. It writes the enum and its `ALL` (every value, in
//! declaration order) from the one list of variants, so a new variant is in `ALL` without
//! another edit, and code that counts by `ALL` (the summary's tables) follows; with
//! spellings (`Variant => "text"`) it also writes `as_str` and `Display` from the same list;
//! with facts (`Variant => "text" { field: value, … }` and a `fn name -> Facts;` line) it
//! also writes `name`, each variant's facts, so a variant without them does not compile.

/// Declares a fieldless enum and `ALL`, every value in declaration order (so `value as
/// usize` is its index in `ALL`). Attributes and doc comments go on the enum and on each
/// variant as usual (derives included).
///
/// Three forms:
///
/// ```
/// subsim_rules::vocabulary! {
///     /// A plain list.
///     #[derive(Clone, Copy, Debug, PartialEq, Eq)]
///     pub enum Tier { Low, High }
/// }
/// assert_eq!(Tier::ALL, [Tier::Low, Tier::High]);
///
/// subsim_rules::vocabulary! {
///     /// A list with its spellings: `as_str` and `Display` too.
///     #[derive(Clone, Copy, Debug, PartialEq, Eq)]
///     pub enum Side { Left => "left", Right => "right" }
/// }
/// assert_eq!(Side::ALL.map(Side::as_str), ["left", "right"]);
/// assert_eq!(Side::Right.to_string(), "right");
///
/// /// What each value of `Door` says besides its spelling.
/// pub struct DoorFacts { pub words: &'static str, pub locks: bool }
///
/// subsim_rules::vocabulary! {
///     /// A list with its spellings and its facts: each variant's spelling is a literal,
///     /// followed by a struct body of `DoorFacts`; the line after the list names the
///     /// function that returns them.
///     #[derive(Clone, Copy, Debug, PartialEq, Eq)]
///     pub enum Door {
///         Front => "front" { words: "the front door", locks: true },
///         Cat => "cat_flap" { words: "the cat flap", locks: false },
///     }
///     /// Each door's facts.
///     pub fn facts -> DoorFacts;
/// }
/// assert_eq!(Door::Cat.as_str(), "cat_flap");
/// assert_eq!(Door::Front.facts().words, "the front door");
/// assert!(!Door::Cat.facts().locks);
/// ```
///
/// In the third form a variant without its `{ … }` does not match the macro (the error
/// points at it), and one whose body leaves a field out does not compile ("missing field
/// … in initializer of `DoorFacts`", at the `fn` line): the facts cannot be forgotten.
#[macro_export]
macro_rules! vocabulary {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $(
                $(#[$vmeta:meta])*
                $variant:ident => $text:literal { $($field:ident : $value:expr),+ $(,)? }
            ),+ $(,)?
        }
        $(#[$fmeta:meta])*
        $fvis:vis fn $facts:ident -> $facts_ty:ident;
    ) => {
        $crate::vocabulary! {
            $(#[$meta])*
            $vis enum $name { $($(#[$vmeta])* $variant => $text),+ }
        }

        impl $name {
            $(#[$fmeta])*
            $fvis const fn $facts(self) -> $facts_ty {
                match self {
                    $($name::$variant => $facts_ty { $($field: $value),+ },)+
                }
            }
        }
    };
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $($(#[$vmeta:meta])* $variant:ident => $text:expr),+ $(,)?
        }
    ) => {
        $crate::vocabulary! {
            $(#[$meta])*
            $vis enum $name { $($(#[$vmeta])* $variant),+ }
        }

        impl $name {
            /// The spelling (the trace's, or the scenario's).
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }
        }

        impl ::core::fmt::Display for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $($(#[$vmeta:meta])* $variant:ident),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: [$name; [$(stringify!($variant)),+].len()] = [$($name::$variant),+];
        }
    };
}
