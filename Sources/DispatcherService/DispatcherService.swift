// DispatcherService module.
