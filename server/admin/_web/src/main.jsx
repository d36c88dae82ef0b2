// The gateway's admin console: React with MUI's components, react-arborist
// for the department tree (drag and drop through react-dnd's HTML5 backend,
// one for the whole page, shared by every tree). Everything it does goes
// through the gateway's public GraphQL API (api.js); nothing is loaded from
// another origin, and the page uses the system's fonts.
import { CssBaseline, ThemeProvider, createTheme } from '@mui/material';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { DndProvider } from 'react-dnd';
import { HTML5Backend } from 'react-dnd-html5-backend';
import { App } from './App.jsx';
import './admin.css';

const theme = createTheme({
  typography: {
    fontFamily: [
      'system-ui',
      '-apple-system',
      '"Segoe UI"',
      '"Noto Sans"',
      '"Noto Sans CJK SC"',
      '"PingFang SC"',
      '"Microsoft YaHei"',
      'Helvetica',
      'Arial',
      'sans-serif',
    ].join(','),
  },
});

createRoot(document.getElementById('root')).render(
  <StrictMode>
    <ThemeProvider theme={theme}>
      <CssBaseline />
      <DndProvider backend={HTML5Backend}>
        <App />
      </DndProvider>
    </ThemeProvider>
  </StrictMode>,
);
