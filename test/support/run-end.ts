/**
 * Work left for the end of the whole test run (the preload runs it): a shared module's own
 * top-level `afterAll` would run after the first file that imports it only.
 */
const tasks: (() => void)[] = []

export const atRunEnd = (task: () => void): void => {
  tasks.push(task)
}

/** Runs and forgets every task; one failing does not keep the others from running. */
export function runEndTasks(): void {
  for (const task of tasks.splice(0)) {
    try {
      task()
    } catch (error) {
      console.error('test run: an end-of-run task failed:', error)
    }
  }
}
