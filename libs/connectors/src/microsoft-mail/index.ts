export {
  createMicrosoftMailConnector,
  type MicrosoftMailOptions,
  microsoftMailConnector,
} from './microsoft-mail.connector';
