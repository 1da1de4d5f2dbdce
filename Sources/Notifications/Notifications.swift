// Notifications module.
