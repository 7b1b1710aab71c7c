export {
  createMicrosoftCalendarConnector,
  type MicrosoftCalendarOptions,
  microsoftCalendarConnector,
} from './microsoft-calendar.connector';
