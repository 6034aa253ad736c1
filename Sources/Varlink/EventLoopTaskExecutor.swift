import NIOCore

/// Runs a task's jobs on a NIO event loop. Handler tasks prefer it, so a call that never awaits
/// anything slow (and the default actors it touches, SE-0417) runs on the connection's own loop
/// thread: no hop to the cooperative pool and back for every request.
final class EventLoopTaskExecutor: TaskExecutor {
    let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}
