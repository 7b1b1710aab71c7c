export {
  createMicrosoftTodoConnector,
  type MicrosoftTodoOptions,
  microsoftTodoConnector,
} from './microsoft-todo.connector';
export { ORIGIN_EXTENSION as MICROSOFT_TODO_ORIGIN_EXTENSION } from './todo-task.mapper';
