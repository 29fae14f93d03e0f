//! [`vocabulary!`](crate::vocabulary): the one way a closed vocabulary (a fieldless enum
//! whose values are listed, counted or spelled somewhere) is declared in the workspace, in
//! the rules crate and the engine alike. It writes the enum and its `ALL` (every value, in
//! declaration order) from the one list of variants, so a new variant is in `ALL` without
//! another edit, and code that counts by `ALL` (the summary's tables) follows; with
//! spellings (`Variant => "text"`) it also writes `as_str` and `Display` from the same list.

/// Declares a fieldless enum and `ALL`, every value in declaration order (so `value as
/// usize` is its index in `ALL`). Attributes and doc comments go on the enum and on each
/// variant as usual (derives included).
///
/// Two forms:
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
/// ```
#[macro_export]
macro_rules! vocabulary {
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
