// ServiceExtensions module.
