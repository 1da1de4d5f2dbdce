// Dispatcher module.
