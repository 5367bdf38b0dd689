// chart.js with every part the report's charts use registered once: the CDFs, ITL and throughput
// charts (charts.ts) and the sweep's trade-off, fit and dial charts (sweepView.ts) import Chart from here.
import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Filler,
  Legend,
  LinearScale,
  LogarithmicScale,
  LineController,
  LineElement,
  PointElement,
  ScatterController,
  Tooltip,
} from 'chart.js';
import zoomPlugin from 'chartjs-plugin-zoom';

Chart.register(LineController, ScatterController, BarController, LineElement, PointElement, BarElement, LinearScale, LogarithmicScale, CategoryScale, Legend, Tooltip, Filler, zoomPlugin);

export { Chart };
