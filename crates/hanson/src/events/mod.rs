//! Where committed changes go: the publisher that receives each durable write's events.

use crate::domain::event::Event;

/// Receives the events of each write after its commit is durable, in the order the writes
/// answered. It must not block: it runs on the path of the write's response.
pub trait Publisher: Send + Sync {
    fn publish(&self, events: Vec<Event>);
}

/// Drops every event: nothing subscribes yet.
pub struct Discard;

impl Publisher for Discard {
    fn publish(&self, _events: Vec<Event>) {}
}
